import { OutboxConfigurationError } from './outbox.errors';
import { closest, rejectUnknownOptionKeys } from './option-keys';
import { OBSERVABILITY_LIMITS, resolveObservability } from './observe/observability.options';
import { OUTBOX_LIMITS, resolveOutboxSettings } from './outbox-options';

const relayId = () => 'relay-under-test';

describe('rejectUnknownOptionKeys', () => {
  it('accepts every documented option', () => {
    expect(() =>
      rejectUnknownOptionKeys({
        transport: 'KAFKA',
        pollIntervalMs: 1000,
        backoff: { initialMs: 10, maxMs: 100, jitter: 0 },
        cleanup: { deleteOnPublish: true },
        routes: [{ transport: 'partner', topic: 't', events: ['a'] }],
        health: { maxLagMs: 1000 },
      }),
    ).not.toThrow();
  });

  it.each([
    [{ pollIntervalMS: 1000 }, 'Unknown OutboxModule option "pollIntervalMS": did you mean "pollIntervalMs"?'],
    [{ backoff: { initialMS: 5 } }, 'Unknown OutboxModule option "backoff.initialMS": did you mean "initialMs"?'],
    [{ routes: [{ transport: 'p', topic: 't', event: ['x'] }] }, 'Unknown OutboxModule option "routes[0].event": did you mean "events"?'],
    [{ cleanup: { retention: 5 } }, 'Unknown OutboxModule option "cleanup.retention". Known options here:'],
  ])('refuses %j with a hint', (options, message) => {
    expect(() => rejectUnknownOptionKeys(options)).toThrow(OutboxConfigurationError);
    expect(() => rejectUnknownOptionKeys(options)).toThrow(message);
  });

  it.each([undefined, null, 'KAFKA', []])('explains what forRoot needs when given %j', (options) => {
    expect(() => rejectUnknownOptionKeys(options)).toThrow(/OutboxModule.forRoot\(\) needs an options object.*forRoot\(\{ transport: 'KAFKA' \}\)/);
  });

  it('suggests only close names', () => {
    expect(closest('batchsize', ['batchSize', 'leaseMs'])).toBe('batchSize');
    expect(closest('somethingElse', ['batchSize', 'leaseMs'])).toBeUndefined();
  });
});

describe('bounds of numeric options', () => {
  it.each([
    [{ pollIntervalMs: 3e9 }, 'pollIntervalMs', OUTBOX_LIMITS.pollIntervalMs],
    [{ publishTimeoutMs: 2 ** 31, leaseMs: OUTBOX_LIMITS.leaseMs }, 'publishTimeoutMs', OUTBOX_LIMITS.publishTimeoutMs],
    [{ batchSize: 1e9 }, 'batchSize', OUTBOX_LIMITS.batchSize],
    [{ backoff: { maxMs: 2 ** 31 } }, 'backoff.maxMs', OUTBOX_LIMITS.backoffMs],
    [{ cleanup: { intervalMs: 2 ** 40 } }, 'cleanup.intervalMs', OUTBOX_LIMITS.cleanupIntervalMs],
    [{ shutdownTimeoutMs: 2 ** 31 }, 'shutdownTimeoutMs', OUTBOX_LIMITS.shutdownTimeoutMs],
  ])('refuses %j naming the option and its range', (options, option, max) => {
    expect(() => resolveOutboxSettings(options, relayId)).toThrow(`Invalid OutboxModule option "${option}": expected an integer from`);
    expect(() => resolveOutboxSettings(options, relayId)).toThrow(`to ${max},`);
  });

  it.each([
    [{ stats: { refreshIntervalMs: 2 ** 31 } }, 'stats.refreshIntervalMs', OBSERVABILITY_LIMITS.refreshIntervalMs],
    [{ health: { maxLagMs: 1e12 } }, 'health.maxLagMs', OBSERVABILITY_LIMITS.thresholdMs],
    [{ health: { maxRoundAgeMs: 1e12 } }, 'health.maxRoundAgeMs', OBSERVABILITY_LIMITS.thresholdMs],
  ])('refuses the observability option %j naming it and its range', (options, option, max) => {
    const relay = resolveOutboxSettings({}, relayId);
    expect(() => resolveObservability(options, relay)).toThrow(`Invalid OutboxModule option "${option}": expected an integer from 1 to ${max},`);
  });

  it('keeps every timer option within what a Node.js timer can hold', () => {
    for (const key of ['pollIntervalMs', 'leaseMs', 'publishTimeoutMs', 'shutdownTimeoutMs', 'backoffMs', 'cleanupIntervalMs'] as const) {
      expect(OUTBOX_LIMITS[key]).toBeLessThanOrEqual(2 ** 31 - 1);
    }
  });
});
