import { Logger } from '@nestjs/common';
import type { OpenedConnection } from '../adapters/connection/open-connection';
import { OutboxConnectionHost } from './outbox-connection.host';
import { SHUTDOWN_STAGE, SHUTDOWN_STEP_TIMEOUT_MS } from './shutdown/shutdown-stage';

describe('OutboxConnectionHost at shutdown', () => {
  afterEach(() => jest.useRealTimers());

  it('gives up on a pool that never ends after its step timeout, saying so, and reports the step meanwhile', async () => {
    jest.useFakeTimers();
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const host = new OutboxConnectionHost({ connection: {} as never, close: () => new Promise<void>(() => undefined) } as OpenedConnection);
    let done = false;
    const closing = host.onApplicationShutdown().then(() => void (done = true));
    await jest.advanceTimersByTimeAsync(SHUTDOWN_STEP_TIMEOUT_MS - 1);
    expect({ done, stage: host[SHUTDOWN_STAGE]() }).toEqual({ done: false, stage: "closing the outbox's connection pool" });
    await jest.advanceTimersByTimeAsync(1);
    await closing;
    expect({ done, stage: host[SHUTDOWN_STAGE]() }).toEqual({ done: true, stage: undefined });
    expect(warn).toHaveBeenCalledWith(`Shutdown: closing the outbox's connection pool did not finish within ${SHUTDOWN_STEP_TIMEOUT_MS} ms; going on without it.`);
    warn.mockRestore();
  });
});
