import { OutboxConfigurationError } from './outbox.errors';
import { notAnOptionsObject, unknownOption } from './outbox.messages';

/**
 * Every key `OutboxModule` options may hold, by nesting level. A misspelled key (`pollIntervalMS`)
 * would otherwise be ignored and its default used in silence, so unknown keys are refused.
 * A new option must be added here, next to its doc comment and its validation.
 */
export const OUTBOX_OPTION_KEYS = {
  '': [
    // settings (core/outbox-settings.ts)
    'relay', 'notifications', 'preparedStatements', 'writeWithCommit', 'pollIntervalMs', 'batchSize', 'maxBatchesInFlight', 'leaseMs', 'publishTimeoutMs', 'maxAttempts', 'backoff',
    'defaultTopic', 'resolveTopic', 'deadLetterPolicy', 'cleanup', 'routes', 'maxPayloadBytes', 'requireAcknowledgement',
    'enrich', 'shutdownTimeoutMs', 'relayId', 'retryIf', 'delivery', 'wal', 'envelope', 'partitioning',
    'claimCheck',
    // observability (core/observe/observability.options.ts, observability/)
    'stats', 'health', 'metrics', 'tracing',
    // module-level (nest/outbox-module.options.ts), including the static extras of forRoot
    'transport', 'transports', 'relayStart', 'tableName', 'schema', 'dataSource', 'connection', 'isGlobal', 'name',
    // the AsyncAPI document (core/asyncapi/asyncapi-options.ts)
    'asyncApi',
    // Schema Registry serializers (core/schema-registry/schema-registry.options.ts)
    'schemaRegistry',
  ],
  asyncApi: ['title', 'version', 'description', 'servers'],
  backoff: ['initialMs', 'maxMs', 'jitter'],
  cleanup: ['publishedRetentionMs', 'deleteOnPublish', 'deadRetentionMs', 'intervalMs', 'batchSize'],
  partitioning: ['interval', 'ahead'],
  'routes[]': ['events', 'aggregates', 'transport', 'topic'],
  stats: ['refreshIntervalMs'],
  health: ['maxLagMs', 'maxDeadRows', 'maxRoundAgeMs'],
  metrics: ['registry', 'prefix', 'latencyBuckets'],
  tracing: ['tracerName'],
  envelope: ['format', 'source', 'destinations', 'headers'],
  schemaRegistry: ['client', 'config', 'subjectStrategy', 'autoRegister', 'events', 'schemaDir'],
  wal: ['write', 'slotName', 'publicationName', 'attemptsBeforeTable', 'maxRetainedBytes', 'readerThread'],
  claimCheck: ['thresholdBytes', 'maxBytes', 'store', 'bucket', 'prefix', 's3Client', 's3Config', 'orphanGraceMs'],
} as const satisfies Record<string, readonly string[]>;

/** Fails on the first key that is not an option, suggesting the closest known one. */
export function rejectUnknownOptionKeys(options: unknown, keys: Record<string, readonly string[]> = OUTBOX_OPTION_KEYS): void {
  if (options === null || options === undefined || typeof options !== 'object' || Array.isArray(options)) {
    throw new OutboxConfigurationError(notAnOptionsObject(options));
  }
  checkLevel(options as Record<string, unknown>, '', '', keys);
}

function checkLevel(value: Record<string, unknown>, level: string, path: string, keys: Record<string, readonly string[]>): void {
  const known = keys[level] ?? [];
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) throw new OutboxConfigurationError(unknownOption(path + key, closest(key, known), known));
    const nested = value[key];
    if (nested === null || typeof nested !== 'object') continue;
    if (Array.isArray(nested) && keys[`${key}[]`]) {
      nested.forEach((item, index) => {
        if (item !== null && typeof item === 'object' && !Array.isArray(item)) checkLevel(item as Record<string, unknown>, `${key}[]`, `${path}${key}[${index}].`, keys);
      });
    } else if (!Array.isArray(nested) && keys[key] && isPlainObject(nested)) {
      checkLevel(nested as Record<string, unknown>, key, `${path}${key}.`, keys);
    }
  }
}

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** The known key within a small edit distance (case-insensitive), if any. */
export function closest(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (!best || distance < best.distance) best = { key: candidate, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(key.length / 4)) ? best.key : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length];
}
