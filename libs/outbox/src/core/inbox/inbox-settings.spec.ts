import { OutboxConfigurationError } from '../outbox.errors';
import { resolveInboxSettings } from './inbox-settings';

describe('resolveInboxSettings', () => {
  it('applies the defaults once', () => {
    expect(resolveInboxSettings({})).toEqual({ retentionMs: 1_209_600_000, pruneIntervalMs: 3_600_000, pruneBatchSize: 1_000 });
  });

  it.each([
    [{ retentionMS: 5 }, 'Unknown OutboxInboxModule option "retentionMS": did you mean "retentionMs"?'],
    [{ retentionMs: 0 }, 'Invalid OutboxInboxModule option "retentionMs": expected an integer from 1 to 315360000000, got 0.'],
    [{ pruneIntervalMs: -1 }, 'Invalid OutboxInboxModule option "pruneIntervalMs": expected an integer from 0 to 86400000, got -1.'],
    [{ pruneIntervalMs: 3e9 }, 'Invalid OutboxInboxModule option "pruneIntervalMs": expected an integer from 0 to 86400000, got 3000000000.'],
    [{ pruneBatchSize: 1e9 }, 'Invalid OutboxInboxModule option "pruneBatchSize": expected an integer from 1 to 100000, got 1000000000.'],
    [{ runTransaction: 'yes' }, 'Invalid OutboxInboxModule option "runTransaction": expected a function (work) => Promise, got "yes".'],
  ])('refuses %j, naming the option', (options, message) => {
    expect(() => resolveInboxSettings(options as object)).toThrow(OutboxConfigurationError);
    expect(() => resolveInboxSettings(options as object)).toThrow(message);
  });
});
