import { openConnection, type OpenedConnection } from '../connection/open-connection';
import type { ConnectionTarget } from '../connection/outbox-connection.options';
import { DelayedWakeUps } from '../../core/delayed-wake-ups';
import { errorText } from '../../core/error-text';
import type { RelayObserver } from '../../core/observe/relay-observer';
import type { OutboxMessageFactory } from '../../core/outbox-message.factory';
import type { OutboxMessageInput } from '../../core/outbox-message-input';
import type { ResolvedOutboxSettings } from '../../core/outbox-options';
import { OutboxRelay, type RelayLogger } from '../../core/outbox-relay';
import type { OutboxTransport } from '../../core/outbox-transport.port';
import { RetryPolicy } from '../../core/retry-policy';
import type { RoundTurns } from '../../core/round-turns';
import type { SqlTransaction } from '../../core/sql-transaction.port';
import { OutboxStatsReader } from '../../core/stats/outbox-stats.reader';
import type { OutboxStatsSnapshot, RelayActivity } from '../../core/stats/outbox-stats';
import { RelayActivityTracker } from '../../core/observe/relay-activity';
import { combineObservers } from '../../core/observe/relay-observer';
import type { OutboxTableLocation } from '../../sql/dialects/outbox-table';
import { createSqlOutboxConsoleStore, createSqlOutboxMaintenanceStore, createSqlOutboxStatsSource, createSqlOutboxStore, createSqlReplayStore } from '../../sql/outbox-sql.factory';
import { OutboxConsole } from '../../core/console/outbox-console';
import { OutboxReplay } from '../../core/replay/outbox-replay';
import { SqlOutboxWriter } from '../../sql/sql-outbox.writer';
import type { TenantDatabase } from './tenant-database';
import { tenantStatementTimedOut } from './tenants.messages';
import { TenantRelayFailureTracker, type TenantRelayFailure } from './tenant-relay-failure';
import { TenantRelayLog } from './tenant-relay.log';

/** What every tenant's outbox shares: the settings, the transports, the turns and the rows' factory. */
export interface TenantOutboxShared {
  settings: ResolvedOutboxSettings;
  table: OutboxTableLocation;
  transports: ReadonlyMap<string, OutboxTransport>;
  turns: RoundTurns;
  factory: OutboxMessageFactory;
  connectTimeoutMs: number;
  /** Bounds each statement on a tenant's database: one that hangs holds a relay turn at most this long. */
  queryTimeoutMs: number;
  /** Idle connections of a tenant's pool are closed after this: an idle tenant holds none. */
  idleTimeoutMs: number;
  statsRefreshIntervalMs: number;
  logger: RelayLogger;
  observer?: RelayObserver;
  /** Makes one tenant's metrics (its series labelled with its id), fed by its relay and read from its stats; none when undefined. */
  metrics?: (tenantId: string, sources: TenantMetricsSources) => TenantMetrics;
}

/** What the operator console works with on one tenant's table: its rows (list, requeue, discard, pause) and replay. */
export interface TenantConsoleParts {
  console: OutboxConsole;
  replayer: OutboxReplay;
}

export interface TenantMetricsSources {
  stats: () => Promise<OutboxStatsSnapshot>;
  activity: () => RelayActivity;
}

/** One tenant's metrics: they observe its relay, and `remove()` takes its series out when the tenant closes. */
export interface TenantMetrics extends RelayObserver {
  remove(): void;
}

/**
 * One tenant's outbox: its pool (small, closing idle connections), the writer on its table, and a
 * relay that polls it and takes its rounds in turn with the other tenants' relays.
 */
export class TenantOutbox {
  private readonly writer: SqlOutboxWriter;
  private readonly relay: OutboxRelay;
  private readonly stats: OutboxStatsReader;
  private readonly activity = new RelayActivityTracker();
  private readonly failures = new TenantRelayFailureTracker();
  private readonly delayed = new DelayedWakeUps(() => void this.relay.trigger());
  private readonly pollTimer: NodeJS.Timeout;
  private readonly metrics?: TenantMetrics;
  private consoleParts?: TenantConsoleParts;
  private readonly table: OutboxTableLocation;

  private constructor(
    readonly tenant: TenantDatabase,
    private readonly opened: OpenedConnection,
    shared: TenantOutboxShared,
    log: TenantRelayLog,
  ) {
    const { settings, table } = shared;
    this.table = table;
    this.stats = new OutboxStatsReader({ source: createSqlOutboxStatsSource(opened.connection, table), refreshIntervalMs: shared.statsRefreshIntervalMs, relayActivity: () => this.activity.activity() });
    this.metrics = shared.metrics?.(tenant.id, { stats: () => this.stats.snapshot(), activity: () => this.activity.activity() });
    const store = createSqlOutboxStore(opened.connection, table, { deadLetterPolicy: settings.deadLetterPolicy, deleteOnPublish: settings.cleanup.deleteOnPublish, preparedStatements: settings.preparedStatements });
    this.writer = new SqlOutboxWriter(shared.factory, table, { onDelayed: (delayMs) => this.delayed.schedule(delayMs) });
    this.relay = new OutboxRelay({
      store,
      transports: shared.transports,
      retryPolicy: new RetryPolicy(settings.maxAttempts, settings.backoff),
      owner: `${settings.relayId}/${tenant.id}`,
      batchSize: settings.batchSize,
      leaseMs: settings.leaseMs,
      publishTimeoutMs: settings.publishTimeoutMs,
      logger: log,
      observer: combineObservers([this.activity, this.failures, log, this.metrics, shared.observer]),
      retryIf: settings.retryIf,
      turns: shared.turns,
      envelopeHeaders: settings.envelope.headers,
    });
    this.activity.running = true;
    this.pollTimer = setInterval(() => void this.relay.trigger(), settings.pollIntervalMs);
    void this.relay.trigger();
  }

  /** Opens the tenant's pool and checks its outbox table; rejects (and leaves nothing open) when either fails. */
  static async open(tenant: TenantDatabase, target: ConnectionTarget, shared: TenantOutboxShared): Promise<TenantOutbox> {
    const queryTimeout = { ms: shared.queryTimeoutMs, error: (ms: number) => tenantStatementTimedOut(tenant.id, ms) };
    // Every line of the tenant's relay and pool names the tenant and its table.
    const log = new TenantRelayLog(shared.logger, `Outbox of tenant "${tenant.id}" (${shared.table.schema ? `${shared.table.schema}.` : ''}${shared.table.tableName})`);
    const opened = openConnection(target, { connectTimeoutMs: shared.connectTimeoutMs, idleTimeoutMs: shared.idleTimeoutMs, logger: log, queryTimeout });
    try {
      const probe = createSqlOutboxStore(opened.connection, shared.table);
      await probe.probe();
      // Inside the try: a refused metric (a name already in the registry) fails the opening and closes the pool.
      return new TenantOutbox(tenant, opened, shared, log);
    } catch (error) {
      await opened.close().catch(() => undefined);
      throw new Error(errorText(error));
    }
  }

  /** Adds messages inside the tenant's transaction; the relay finds them at its next poll, or is woken by `wake()` after the commit. */
  add(transaction: SqlTransaction, messages: OutboxMessageInput | OutboxMessageInput[]): Promise<string[]> {
    return this.writer.add(transaction, messages);
  }

  /** Publishes what is claimable now, in its turns. */
  wake(): Promise<void> {
    return this.relay.trigger();
  }

  /** Why the relay's rounds fail, while they do (see `TenantRelayFailureTracker`). */
  relayFailure(): TenantRelayFailure | undefined {
    return this.failures.current();
  }

  /** The console's view of the tenant's table, made on first use, over the tenant's own pool. */
  console(): TenantConsoleParts {
    const { connection } = this.opened;
    this.consoleParts ??= {
      console: new OutboxConsole(createSqlOutboxConsoleStore(connection, this.table), createSqlOutboxMaintenanceStore(connection, this.table)),
      replayer: new OutboxReplay(createSqlReplayStore(connection, this.table)),
    };
    return this.consoleParts;
  }

  snapshot(options: { fresh?: boolean } = {}): Promise<OutboxStatsSnapshot> {
    return this.stats.snapshot(options);
  }

  /** Stops the relay (waiting up to `timeoutMs` for its batch), then closes the pool: the tenant holds no connection after. */
  async close(timeoutMs: number): Promise<void> {
    clearInterval(this.pollTimer);
    this.delayed.stop();
    this.activity.running = false;
    await this.relay.stop(timeoutMs);
    // A tenant gone from the list takes its series along: no stale gauge for a database no longer relayed.
    this.metrics?.remove();
    await this.opened.close();
  }
}
