import { OutboxConfigurationError } from '../outbox.errors';
import { resolveInboxSettings } from './inbox-settings';

describe('resolveInboxSettings', () => {
  it('applies the defaults once', () => {
    expect(resolveInboxSettings({})).toEqual({ retentionMs: 1_209_600_000, pruneIntervalMs: 3_600_000, pruneBatchSize: 1_000 });
  });

  it.each([
    [{ retentionMS: 5 }, 'Unknown OutboxInboxModule option "retentionMS": did you mean "retentionMs"?'],
    [{ retentionMs: 0 }, 'Invalid OutboxInboxModule option "retentionMs": expected a positive integer, got 0.'],
    [{ pruneIntervalMs: -1 }, 'Invalid OutboxInboxModule option "pruneIntervalMs": expected an integer of 0 or more, got -1.'],
    [{ runTransaction: 'yes' }, 'Invalid OutboxInboxModule option "runTransaction": expected a function (work) => Promise, got "yes".'],
  ])('refuses %j, naming the option', (options, message) => {
    expect(() => resolveInboxSettings(options as object)).toThrow(OutboxConfigurationError);
    expect(() => resolveInboxSettings(options as object)).toThrow(message);
  });
});
