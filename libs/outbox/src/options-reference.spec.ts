import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveConsoleOptions } from './console/outbox-console.options';
import { resolveObservability } from './core/observe/observability.options';
import { INBOX_OPTION_KEYS, resolveInboxSettings } from './core/inbox/inbox-settings';
import { OUTBOX_OPTION_KEYS } from './core/option-keys';
import { resolveOutboxSettings } from './core/outbox-options';
import { WAL_DEFAULTS } from './core/stream/wal-options';
import { CLAIM_CHECK_DEFAULTS } from './core/claim-check/claim-check-options';
import { CONSOLE_OPTION_KEYS } from './console/outbox-console.options';
import { resolveMetricsOptions } from './core/observe/metrics/metrics.options';
import { resolveTracingOptions } from './core/observe/tracing/tracing.options';
import { BOUNDED_SHUTDOWN_DEFAULTS } from './nest/shutdown/bounded-shutdown';

/**
 * docs/options.md is the options reference: this keeps it from drifting. The keys come from the
 * lists the modules check unknown keys against, the defaults from the functions that apply them.
 */
const reference = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'options.md'), 'utf8');

/** `key` → the default cell of its row, per `## Module` section. */
function rowsOf(section: string): Map<string, string> {
  const start = reference.indexOf(`\n## ${section}\n`);
  if (start < 0) throw new Error(`docs/options.md has no "## ${section}" section`);
  const end = reference.indexOf('\n## ', start + 1);
  const rows = new Map<string, string>();
  for (const line of reference.slice(start, end < 0 ? undefined : end).split('\n')) {
    const cells = /^\| `([^`]+)` \| ([^|]*) \|/.exec(line);
    if (cells) rows.set(cells[1], cells[2].trim());
  }
  return rows;
}

/** Every key path a module accepts: `backoff.initialMs`, `routes[].topic`, … */
function keyPaths(keys: Record<string, readonly string[]>): string[] {
  return Object.entries(keys).flatMap(([level, names]) => names.map((name) => (level === '' ? name : `${level}.${name}`)));
}

/** How the reference writes a default: in backticks, as TypeScript would (no digit separators). */
function shown(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : String(value);
}

function firstCode(cell: string): string | undefined {
  return /`([^`]*)`/.exec(cell)?.[1];
}

function expectDefaults(rows: Map<string, string>, defaults: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(defaults)) {
    expect({ key, shown: firstCode(rows.get(key) ?? '') }).toEqual({ key, shown: shown(value) });
  }
}

describe('docs/options.md', () => {
  it('has a row for every OutboxModule option, and none for an option that does not exist', () => {
    const rows = rowsOf('OutboxModule');
    const known = keyPaths(OUTBOX_OPTION_KEYS);
    expect(known.filter((key) => !rows.has(key))).toEqual([]);
    expect([...rows.keys()].filter((key) => !known.includes(key))).toEqual([]);
  });

  it("states OutboxModule's defaults as the code applies them", () => {
    const settings = resolveOutboxSettings({}, () => 'relay-id');
    const observability = resolveObservability({}, settings);
    const metrics = resolveMetricsOptions(true)!;
    const tracing = resolveTracingOptions(true)!;
    expectDefaults(rowsOf('OutboxModule'), {
      relay: settings.relay,
      notifications: settings.notifications,
      preparedStatements: settings.preparedStatements,
      pollIntervalMs: settings.pollIntervalMs,
      batchSize: settings.batchSize,
      maxBatchesInFlight: settings.maxBatchesInFlight,
      leaseMs: settings.leaseMs,
      publishTimeoutMs: settings.publishTimeoutMs,
      maxAttempts: settings.maxAttempts,
      'backoff.initialMs': settings.backoff.initialMs,
      'backoff.maxMs': settings.backoff.maxMs,
      'backoff.jitter': settings.backoff.jitter,
      'envelope.format': settings.envelope.format,
      shutdownTimeoutMs: settings.shutdownTimeoutMs,
      maxPayloadBytes: settings.maxPayloadBytes,
      requireAcknowledgement: settings.requireAcknowledgement,
      deadLetterPolicy: settings.deadLetterPolicy,
      'cleanup.publishedRetentionMs': settings.cleanup.publishedRetentionMs,
      'cleanup.deleteOnPublish': settings.cleanup.deleteOnPublish,
      'cleanup.deadRetentionMs': settings.cleanup.deadRetentionMs,
      'cleanup.intervalMs': settings.cleanup.intervalMs,
      'cleanup.batchSize': settings.cleanup.batchSize,
      claimCheck: false,
      'claimCheck.thresholdBytes': CLAIM_CHECK_DEFAULTS.thresholdBytes,
      'claimCheck.maxBytes': CLAIM_CHECK_DEFAULTS.maxBytes,
      'claimCheck.store': CLAIM_CHECK_DEFAULTS.store,
      'claimCheck.prefix': CLAIM_CHECK_DEFAULTS.prefix,
      'claimCheck.orphanGraceMs': CLAIM_CHECK_DEFAULTS.orphanGraceMs,
      delivery: settings.delivery,
      'wal.write': WAL_DEFAULTS.write,
      'wal.attemptsBeforeTable': WAL_DEFAULTS.attemptsBeforeTable,
      'wal.maxRetainedBytes': WAL_DEFAULTS.maxRetainedBytes,
      'wal.readerThread': WAL_DEFAULTS.readerThread,
      'stats.refreshIntervalMs': observability.stats.refreshIntervalMs,
      'health.maxLagMs': observability.health.maxLagMs,
      'health.maxDeadRows': observability.health.maxDeadRows,
      'health.maxRoundAgeMs': observability.health.maxRoundAgeMs,
      metrics: false,
      'metrics.prefix': metrics.prefix,
      tracing: false,
      'tracing.tracerName': tracing.tracerName,
    });
  });

  it('has a row for every OutboxInboxModule option, with the defaults the code applies', () => {
    const rows = rowsOf('OutboxInboxModule');
    expect(INBOX_OPTION_KEYS.filter((key) => !rows.has(key))).toEqual([]);
    const settings = resolveInboxSettings({});
    const poison = settings.poison as Exclude<typeof settings.poison, false>;
    expectDefaults(rows, {
      retentionMs: settings.retentionMs,
      pruneIntervalMs: settings.pruneIntervalMs,
      pruneBatchSize: settings.pruneBatchSize,
      replayPollMs: settings.replayPollMs,
      'poison.maxAttempts': poison.maxAttempts,
      'poison.maxStoredChars': poison.maxStoredChars,
      metrics: false,
    });
  });

  it('has a row for every OutboxConsoleModule option, with the defaults the code applies', () => {
    const rows = rowsOf('OutboxConsoleModule');
    expect(CONSOLE_OPTION_KEYS.filter((key) => !rows.has(key))).toEqual([]);
    expect([...rows.keys()].filter((key) => !(CONSOLE_OPTION_KEYS as readonly string[]).includes(key))).toEqual([]);
    const resolved = resolveConsoleOptions({ noAuth: true });
    expectDefaults(rows, { path: resolved.path, readOnly: resolved.readOnly, maxPageSize: resolved.maxPageSize, refreshIntervalMs: resolved.refreshIntervalMs });
  });

  it('has a row for every enableBoundedShutdown option, with the defaults the code applies', () => {
    const rows = rowsOf('enableBoundedShutdown');
    expect([...rows.keys()].sort()).toEqual(['exit', 'logger', 'signals', 'timeoutMs']);
    expect(firstCode(rows.get('timeoutMs')!)).toBe(String(BOUNDED_SHUTDOWN_DEFAULTS.timeoutMs));
    expect(firstCode(rows.get('signals')!)).toBe(`[${BOUNDED_SHUTDOWN_DEFAULTS.signals.map((signal) => `'${signal}'`).join(', ')}]`);
  });
});
