import { OutboxConfigurationError } from './outbox.errors';
import { conflictingOptions, invalidOption } from './outbox.messages';
import { CONTROL_CHARACTER, DESTINATION_RULE, isDestinationName } from './names';
import type { OutboxRoute, ResolvedOutboxSettings } from './outbox-settings';

/** The checks of the resolved settings: each failure names the option, what it takes and what it got. */
export function validateSettings(settings: ResolvedOutboxSettings): void {
  if (typeof settings.relay !== 'boolean') failOption('relay', 'true or false', settings.relay);
  if (typeof settings.notifications !== 'boolean') failOption('notifications', 'true or false', settings.notifications);
  if (typeof settings.preparedStatements !== 'boolean') failOption('preparedStatements', 'true or false', settings.preparedStatements);
  if (typeof settings.writeWithCommit !== 'boolean') failOption('writeWithCommit', 'true or false', settings.writeWithCommit);
  bounded('pollIntervalMs', settings.pollIntervalMs, 1, LIMITS.pollIntervalMs);
  bounded('batchSize', settings.batchSize, 1, LIMITS.batchSize);
  bounded('maxBatchesInFlight', settings.maxBatchesInFlight, 1, LIMITS.maxBatchesInFlight);
  bounded('leaseMs', settings.leaseMs, 1, LIMITS.leaseMs);
  bounded('publishTimeoutMs', settings.publishTimeoutMs, 1, LIMITS.publishTimeoutMs);
  bounded('maxAttempts', settings.maxAttempts, 1, LIMITS.maxAttempts);
  bounded('backoff.initialMs', settings.backoff.initialMs, 1, LIMITS.backoffMs);
  bounded('backoff.maxMs', settings.backoff.maxMs, 1, LIMITS.backoffMs);
  bounded('shutdownTimeoutMs', settings.shutdownTimeoutMs, 0, LIMITS.shutdownTimeoutMs);
  bounded('maxPayloadBytes', settings.maxPayloadBytes, 1, LIMITS.maxPayloadBytes);
  if (typeof settings.requireAcknowledgement !== 'boolean') failOption('requireAcknowledgement', 'true or false', settings.requireAcknowledgement);
  validateRoutes(settings.routes);
  if (settings.deadLetterPolicy !== 'hold' && settings.deadLetterPolicy !== 'skip') failOption('deadLetterPolicy', `'hold' or 'skip'`, settings.deadLetterPolicy);
  validateCleanup(settings);
  const { jitter } = settings.backoff;
  if (typeof jitter !== 'number' || !(jitter >= 0 && jitter <= 1)) failOption('backoff.jitter', 'a number from 0 to 1', jitter);
  if (settings.backoff.maxMs < settings.backoff.initialMs) {
    throw new OutboxConfigurationError(
      conflictingOptions('backoff.initialMs', 'backoff.maxMs', `the cap ${settings.backoff.maxMs} ms is below the first delay ${settings.backoff.initialMs} ms`),
    );
  }
  if (settings.publishTimeoutMs >= settings.leaseMs) {
    throw new OutboxConfigurationError(
      conflictingOptions(
        'publishTimeoutMs',
        'leaseMs',
        `a publish may take ${settings.publishTimeoutMs} ms but the lease ends after ${settings.leaseMs} ms, so another relay could publish the same row meanwhile; make leaseMs larger`,
      ),
    );
  }
  if (typeof settings.relayId !== 'string' || settings.relayId.length === 0 || settings.relayId.length > 64 || CONTROL_CHARACTER.test(settings.relayId)) {
    failOption('relayId', 'a string of 1 to 64 characters without control characters', settings.relayId);
  }
  if (settings.defaultTopic !== undefined && !isDestinationName(settings.defaultTopic)) failOption('defaultTopic', DESTINATION_RULE, settings.defaultTopic);
  for (const hook of ['resolveTopic', 'enrich', 'retryIf'] as const) {
    if (settings[hook] !== undefined && typeof settings[hook] !== 'function') failOption(hook, 'a function', settings[hook]);
  }
}

function validateCleanup({ cleanup, leaseMs }: ResolvedOutboxSettings): void {
  bounded('cleanup.publishedRetentionMs', cleanup.publishedRetentionMs, 1, LIMITS.retentionMs);
  bounded('cleanup.intervalMs', cleanup.intervalMs, 1, LIMITS.cleanupIntervalMs);
  bounded('cleanup.batchSize', cleanup.batchSize, 1, LIMITS.batchSize);
  if (typeof cleanup.deleteOnPublish !== 'boolean') failOption('cleanup.deleteOnPublish', 'true or false', cleanup.deleteOnPublish);
  if (cleanup.deadRetentionMs !== null) bounded('cleanup.deadRetentionMs', cleanup.deadRetentionMs, 1, LIMITS.retentionMs);
  // A row must outlive any lease on it, or a slow relay's late outcome would meet a missing row.
  for (const option of ['publishedRetentionMs', 'deadRetentionMs'] as const) {
    const retention = cleanup[option];
    if (retention !== null && retention < leaseMs && !(option === 'publishedRetentionMs' && cleanup.deleteOnPublish)) {
      throw new OutboxConfigurationError(
        conflictingOptions(`cleanup.${option}`, 'leaseMs', `rows would be deleted after ${retention} ms, sooner than a lease of ${leaseMs} ms ends`),
      );
    }
  }
}

function validateRoutes(routes: unknown): void {
  if (!Array.isArray(routes)) failOption('routes', 'an array of { transport, topic, events?, aggregates? }', routes);
  routes.forEach((route: Partial<OutboxRoute>, index) => {
    const at = `routes[${index}]`;
    if (typeof route !== 'object' || route === null) failOption(at, 'an object { transport, topic, events?, aggregates? }', route);
    if (typeof route.transport !== 'string' || route.transport === '') failOption(`${at}.transport`, 'the name of a transport in "transports"', route.transport);
    if (!isDestinationName(route.topic)) failOption(`${at}.topic`, DESTINATION_RULE, route.topic);
    for (const list of ['events', 'aggregates'] as const) {
      const value = route[list];
      if (value !== undefined && (!Array.isArray(value) || value.some((item) => typeof item !== 'string'))) failOption(`${at}.${list}`, 'an array of strings', value);
    }
  });
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * Upper bounds of the numeric options. Node.js timers cannot wait longer than 2^31 − 1 ms (about
 * 24.8 days): a longer delay fires after 1 ms, so `pollIntervalMs: 3e9` would poll a thousand times
 * a second. Every timer option stays far below that, at what still makes sense for an outbox.
 */
export const OUTBOX_LIMITS = {
  pollIntervalMs: HOUR,
  leaseMs: HOUR,
  publishTimeoutMs: 10 * 60_000,
  shutdownTimeoutMs: 10 * 60_000,
  backoffMs: DAY,
  cleanupIntervalMs: DAY,
  retentionMs: 3_650 * DAY,
  batchSize: 10_000,
  maxBatchesInFlight: 16,
  maxAttempts: 1_000,
  maxPayloadBytes: 64 * 1_048_576,
} as const;
const LIMITS = OUTBOX_LIMITS;

function bounded(option: string, value: unknown, min: number, max: number): void {
  if (!Number.isSafeInteger(value) || (value as number) < min || (value as number) > max) {
    failOption(option, `an integer from ${min} to ${max}`, value);
  }
}

export function failOption(option: string, expected: string, got: unknown): never {
  throw new OutboxConfigurationError(invalidOption(option, expected, got));
}

export function isPlainObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
