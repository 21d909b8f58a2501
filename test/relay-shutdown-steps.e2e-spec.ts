import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import { OutboxRelayHost } from '@nest-outbox/outbox';
import { createOutboxHarness, type OutboxHarness } from './support/outbox-harness';

/** A transport whose close never ends, like a client that keeps retrying a broker that is gone. */
class NeverClosingTransport extends RecordingOutboxTransport {
  closeCalled = false;
  close(): Promise<void> {
    this.closeCalled = true;
    return new Promise<void>(() => undefined);
  }
}

describe("the relay's shutdown on SQLite, with a transport whose close never ends", () => {
  let harness: OutboxHarness | undefined;
  afterAll(() => harness?.close().catch(() => undefined));

  it('goes on after 3 s without it, and names the step while it waits', async () => {
    const transport = new NeverClosingTransport();
    harness = await createOutboxHarness('sqlite', { transport, relay: true, pollIntervalMs: 50 });
    const host = harness.module.get(OutboxRelayHost);
    const started = Date.now();
    const stopping = host.beforeApplicationShutdown();
    await new Promise((resolve) => setTimeout(resolve, 500));
    // The key enableBoundedShutdown reads a host's step under (a registered symbol: the same in any copy of the package).
    const stage = (host as unknown as Record<symbol, () => string | undefined>)[Symbol.for('nest-outbox:shutdown-stage')]();
    expect(stage).toBe('closing transport "recording"');
    await stopping;
    const elapsed = Date.now() - started;
    expect({ closeCalled: transport.closeCalled, boundedAt3s: elapsed >= 2_900 && elapsed < 4_500 }).toEqual({ closeCalled: true, boundedAt3s: true });
  });
});
