import { OutboxConfigurationError } from './outbox.errors';
import { OUTBOX_DEFAULTS, resolveOutboxSettings } from './outbox-options';
import { validateTableName } from './names';

const relayId = () => 'relay-under-test';

describe('resolveOutboxSettings', () => {
  it('applies every default once', () => {
    const settings = resolveOutboxSettings({}, relayId);
    expect(settings).toMatchObject({
      relay: true,
      pollIntervalMs: OUTBOX_DEFAULTS.pollIntervalMs,
      batchSize: OUTBOX_DEFAULTS.batchSize,
      maxBatchesInFlight: 2,
      leaseMs: OUTBOX_DEFAULTS.leaseMs,
      maxAttempts: OUTBOX_DEFAULTS.maxAttempts,
      backoff: OUTBOX_DEFAULTS.backoff,
      relayId: 'relay-under-test',
    });
  });

  it('merges a partial backoff with the defaults', () => {
    expect(resolveOutboxSettings({ backoff: { initialMs: 50 } }, relayId).backoff).toEqual({ ...OUTBOX_DEFAULTS.backoff, initialMs: 50 });
  });

  it.each([
    [{ pollIntervalMs: -5 }, 'pollIntervalMs'],
    [{ batchSize: 0 }, 'batchSize'],
    [{ maxBatchesInFlight: 0 }, 'maxBatchesInFlight'],
    [{ maxBatchesInFlight: 17 }, 'maxBatchesInFlight'],
    [{ preparedStatements: 'yes' as never }, 'preparedStatements'],
    [{ leaseMs: 1.5 }, 'leaseMs'],
    [{ maxAttempts: Number.NaN }, 'maxAttempts'],
    [{ backoff: { jitter: 2 } }, 'backoff.jitter'],
    [{ relayId: '' }, 'relayId'],
    [{ defaultTopic: '' }, 'defaultTopic'],
    [{ resolveTopic: 'orders' as never }, 'resolveTopic'],
    [{ deadLetterPolicy: 'drop' as never }, 'deadLetterPolicy'],
    [{ cleanup: { batchSize: 0 } }, 'cleanup.batchSize'],
    [{ maxPayloadBytes: 0 }, 'maxPayloadBytes'],
    [{ routes: [{ transport: 'partner', topic: '' }] }, 'routes[0].topic'],
    [{ backoff: 'fast' as never }, 'backoff'],
    [{ cleanup: ['x'] as never }, 'cleanup'],
    [{ defaultTopic: '   ' }, 'defaultTopic'],
    [{ defaultTopic: 'orders\u0000' }, 'defaultTopic'],
    [{ routes: [{ transport: 'partner', topic: 'audit\nlog' }] }, 'routes[0].topic'],
    [{ relayId: 'relay\n1' }, 'relayId'],
  ])('rejects %j naming the option', (options, option) => {
    expect(() => resolveOutboxSettings(options, relayId)).toThrow(OutboxConfigurationError);
    expect(() => resolveOutboxSettings(options, relayId)).toThrow(`"${option}"`);
  });

  it('rejects a publish timeout that outlives the lease, naming both options', () => {
    const attempt = () => resolveOutboxSettings({ leaseMs: 5_000, publishTimeoutMs: 5_000 }, relayId);
    expect(attempt).toThrow(/"publishTimeoutMs" and "leaseMs"/);
  });

  it('rejects a retention shorter than the lease, naming both options', () => {
    expect(() => resolveOutboxSettings({ leaseMs: 60_000, cleanup: { publishedRetentionMs: 1_000 } }, relayId)).toThrow(
      /"cleanup.publishedRetentionMs" and "leaseMs"/,
    );
    expect(() => resolveOutboxSettings({ leaseMs: 60_000, cleanup: { deadRetentionMs: 5_000 } }, relayId)).toThrow(/"cleanup.deadRetentionMs" and "leaseMs"/);
    expect(resolveOutboxSettings({ leaseMs: 60_000, cleanup: { deleteOnPublish: true, publishedRetentionMs: 1 } }, relayId).cleanup.deleteOnPublish).toBe(true);
  });

  it('rejects a backoff cap below the first delay', () => {
    expect(() => resolveOutboxSettings({ backoff: { initialMs: 10_000, maxMs: 1_000 } }, relayId)).toThrow(/"backoff.initialMs" and "backoff.maxMs"/);
  });
});

describe('validateTableName', () => {
  it('accepts plain identifiers', () => {
    expect(validateTableName('outbox_messages_2')).toBe('outbox_messages_2');
  });

  it.each(['outbox; drop table orders', 'public.outbox', '1outbox', '', 'x'.repeat(64)])('rejects %j', (name) => {
    expect(() => validateTableName(name)).toThrow(/"tableName"/);
  });
});
