import { OutboxConfigurationError } from '../outbox.errors';
import { resolveInboxSettings } from './inbox-settings';

describe('resolveInboxSettings', () => {
  it('applies the defaults once', () => {
    expect(resolveInboxSettings({})).toEqual({
      retentionMs: 1_209_600_000,
      pruneIntervalMs: 3_600_000,
      pruneBatchSize: 1_000,
      replayPollMs: 5_000,
      poison: { maxAttempts: 5, maxStoredChars: 65_536 },
    });
    expect(resolveInboxSettings({ poison: false }).poison).toBe(false);
  });

  it.each([
    [{ retentionMS: 5 }, 'Unknown OutboxInboxModule option "retentionMS": did you mean "retentionMs"?'],
    [{ retentionMs: 0 }, 'Invalid OutboxInboxModule option "retentionMs": expected an integer from 1 to 315360000000, got 0.'],
    [{ pruneIntervalMs: -1 }, 'Invalid OutboxInboxModule option "pruneIntervalMs": expected an integer from 0 to 86400000, got -1.'],
    [{ pruneIntervalMs: 3e9 }, 'Invalid OutboxInboxModule option "pruneIntervalMs": expected an integer from 0 to 86400000, got 3000000000.'],
    [{ pruneBatchSize: 1e9 }, 'Invalid OutboxInboxModule option "pruneBatchSize": expected an integer from 1 to 100000, got 1000000000.'],
    [{ poison: { maxAttempts: 0 } }, 'Invalid OutboxInboxModule option "poison.maxAttempts": expected an integer from 1 to 1000, got 0.'],
    [{ poison: { maxAtempts: 3 } }, 'Unknown OutboxInboxModule option "poison.maxAtempts". Known: "maxAttempts", "maxStoredChars"'],
    [{ poison: true }, 'Invalid OutboxInboxModule option "poison": expected an object or false, got true.'],
    [{ replayPollMs: -5 }, 'Invalid OutboxInboxModule option "replayPollMs": expected an integer from 0 to 86400000, got -5.'],
    [{ runTransaction: 'yes' }, 'Invalid OutboxInboxModule option "runTransaction": expected a function (work) => Promise, got "yes".'],
  ])('refuses %j, naming the option', (options, message) => {
    expect(() => resolveInboxSettings(options as object)).toThrow(OutboxConfigurationError);
    expect(() => resolveInboxSettings(options as object)).toThrow(message);
  });
});
