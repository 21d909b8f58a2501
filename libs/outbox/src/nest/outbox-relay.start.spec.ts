import { HttpAdapterHost } from '@nestjs/core';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { OutboxRelayStartGate, type OutboxRelayStart } from './outbox-relay.start';

describe('OutboxRelayStartGate', () => {
  let host: HttpAdapterHost;
  let starts: number;
  const gate = (mode: OutboxRelayStart) => new OutboxRelayStartGate(mode, host, () => void starts++);

  beforeEach(() => {
    host = new HttpAdapterHost();
    host.httpAdapter = {} as never;
    starts = 0;
  });

  it("'listen' starts once when the HTTP server listens, or at once when it already does", () => {
    const waiting = gate('listen');
    expect(waiting.arm()).toContain('waiting for the HTTP server to listen');
    expect(starts).toBe(0);
    host.listening = true;
    expect(starts).toBe(1);
    waiting.request();
    expect(starts).toBe(1);
    expect(gate('listen').arm()).toContain('started: the HTTP server listens');
    expect(starts).toBe(2);
  });

  it("'manual' waits for request(), even one made before bootstrap, and never starts after stop()", () => {
    const early = gate('manual');
    early.request();
    expect(starts).toBe(0);
    early.arm();
    expect(starts).toBe(1);
    const stopped = gate('manual');
    expect(stopped.arm()).toContain('waiting for OutboxRelayHost.start()');
    stopped.stop();
    stopped.request();
    const listening = gate('listen');
    listening.arm();
    listening.stop();
    host.listening = true;
    expect(starts).toBe(1);
  });

  it('refuses an unknown mode and a listen without an HTTP server, naming relayStart', () => {
    expect(() => OutboxRelayStartGate.resolve('soon')).toThrow(OutboxConfigurationError);
    expect(() => OutboxRelayStartGate.resolve('soon')).toThrow('"relayStart"');
    expect(OutboxRelayStartGate.resolve(undefined)).toBe('bootstrap');
    host.httpAdapter = undefined as never;
    expect(() => gate('listen').check()).toThrow(/"relayStart": 'listen'.*has none/);
    expect(() => gate('manual').check()).not.toThrow();
  });
});
