import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type * as PromClient from 'prom-client';
import { ModuleRef } from '@nestjs/core';
import { errorText } from '../core/error-text';
import { OutboxConfigurationError } from '../core/outbox.errors';
import type { ResolvedOutboxSettings } from '../core/outbox-options';
import type { OutboxTransport } from '../core/outbox-transport.port';
import { RetryPolicy } from '../core/retry-policy';
import { StreamRelay } from '../core/stream/stream-relay';
import { walNeedsPostgres, walTableUnreachable } from '../core/stream/stream.messages';
import { WAL_DEFAULTS } from '../core/stream/wal-options';
import { TableOverflow } from '../sql/wal/table-overflow';
import { notificationChannel } from '../sql/postgres-notification.listener';
import { loadPgLogicalReplication } from '../postgres-wal/pg-logical-replication.loader';
import { PgoutputReader } from '../postgres-wal/pgoutput.reader';
import { prepareWalSlot, walSetupLock, walSlotState, type WalNames, type WalQuery, type WalSlotLag } from '../postgres-wal/wal-slot.setup';
import { WalStreamLock } from '../postgres-wal/wal-stream.lock';
import { SHUTDOWN_STAGE, SHUTDOWN_STEP_TIMEOUT_MS, type ReportsShutdownStage } from './shutdown/shutdown-stage';
import { ShutdownSteps } from './shutdown/shutdown-steps';
import { RememberedPosition } from '../core/stream/remembered-position';
import type { DeliveryPlan } from '../core/stream/delivery-plan';
import { WalPositionTable } from '../sql/wal/wal-position.table';
import type { ResolvedObservability } from '../core/observe/observability.options';
import { loadOptional } from '../core/optional-peer';
import { resolveMetricsOptions } from '../observability/metrics/metrics.options';
import { registerWalSlotMetrics } from '../observability/wal/wal-slot.metrics';
import { OutboxTable } from '../sql/dialects/outbox-table';
import { replicationConnection } from '../postgres-wal/replication-connection';
import { InProcessHandlers } from './in-process/in-process-handlers';
import { OutboxObservers } from './observe/outbox-observers.registry';
import type { DataSource } from 'typeorm';
import { connectionWalNeedsPg } from '../adapters/connection/connection.messages';
import { OUTBOX_CONNECTION, OUTBOX_DELIVERY, OUTBOX_DATA_SOURCE, OUTBOX_EXTRAS, OUTBOX_OBSERVABILITY, OUTBOX_SETTINGS } from './outbox.constants';
import type { SqlConnection } from '../core/sql-connection.port';
import { OUTBOX_MODULE_OPTIONS, type ResolvedOutboxExtras } from './outbox.module-definition';
import type { OutboxModuleOptions } from './outbox-module.options';
import { resolveTransports } from './outbox-transports.resolver';
import { OutboxRelayHost } from './outbox-relay.host';

// How long the stream waits before trying again after its connection (or its lock's) failed: the
// server restarting, or unreachable. A standby does not poll: it waits for the stream lock.
const RECONNECT_MS = 1_000;
// Just after the lock is granted, the previous holder's WAL sender may still be exiting and hold the
// slot for some milliseconds: the slot is asked for again at this pace, for at most SLOT_RELEASE_MS.
const SLOT_RETRY_MS = 20;
const SLOT_RELEASE_MS = 5_000;
// Batches decoded ahead of the one in flight.
const BATCHES_AHEAD = 4;

/**
 * The WAL delivery mode (`delivery: 'wal'`): checks the server and creates the slot at init,
 * streams from bootstrap, and stops before the transports are closed. Does nothing in the table
 * mode. The table relay keeps running beside it, for delayed messages and rows written before a
 * switch of modes.
 */
@Injectable()
export class OutboxWalHost implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown, OnModuleDestroy, ReportsShutdownStage {
  private readonly logger = new Logger('Outbox');
  private names: WalNames | undefined;
  private prefix = '';
  private transports = new Map<string, OutboxTransport>();
  private relay: StreamRelay | undefined;
  private reader: PgoutputReader | undefined;
  private reconnect: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastEnd: string | undefined;
  private restarting: StreamRelay | undefined;
  private lag: { at: number; reading: Promise<WalSlotLag | undefined> } | undefined;
  private removeMetrics: (() => void) | undefined;
  private readonly steps = new ShutdownSteps("the WAL relay's", this.logger);
  private lock: WalStreamLock | undefined;
  private lockedAt = 0;
  private position: RememberedPosition | undefined;

  // `_relayHost` is not called: depending on it makes Nest run this host's shutdown hook first
  // (dependents before their dependencies), so the stream stops before that host closes the transports.
  constructor(
    @Inject(OUTBOX_SETTINGS) private readonly settings: ResolvedOutboxSettings,
    @Inject(OUTBOX_DELIVERY) private readonly delivery: DeliveryPlan,
    @Inject(OUTBOX_MODULE_OPTIONS) private readonly options: OutboxModuleOptions,
    @Inject(OUTBOX_EXTRAS) private readonly extras: ResolvedOutboxExtras,
    @Inject(OUTBOX_CONNECTION) private readonly connection: SqlConnection,
    @Inject(OUTBOX_DATA_SOURCE) dataSource: DataSource | null,
    private readonly moduleRef: ModuleRef,
    private readonly observers: OutboxObservers,
    private readonly inProcessHandlers: InProcessHandlers,
    @Inject(OUTBOX_OBSERVABILITY) private readonly observability: ResolvedObservability,
    _relayHost: OutboxRelayHost,
  ) {
    // At construction, before any module's init hook: the table relay's startup probe, which runs
    // first, would otherwise hide the real mistake behind a missing-table error.
    if (delivery.mode === 'wal' && connection.dialect !== 'postgres') {
      throw new OutboxConfigurationError(dataSource ? walNeedsPostgres(dataSource.options.type) : connectionWalNeedsPg(connection.layer));
    }
  }

  private readonly query = async (sql: string, params?: unknown[]) => (await this.connection.run({ sql, params: params ?? [] })).records;

  /** The slot and publication this app streams from, or `undefined` in the table mode. */
  get slot(): WalNames | undefined {
    return this.delivery.mode === 'wal' ? this.delivery.slot : undefined;
  }

  async onModuleInit(): Promise<void> {
    if (this.delivery.mode !== 'wal') return;
    loadPgLogicalReplication();
    const names = this.delivery.slot;
    await prepareWalSlot(this.query, names, {
      streams: this.settings.relay,
      tables: [OutboxTable.on('postgres', this.extras).quoted(), OutboxTable.on('postgres', this.extras).paused.quoted()],
      positions: { create: WalPositionTable.createStatements(this.extras), forget: WalPositionTable.forgetStatement(this.extras) },
      serialized: (work) => this.serialized(work),
    });
    const metrics = resolveMetricsOptions(this.options.metrics);
    if (metrics) this.removeMetrics = registerWalSlotMetrics(loadOptional<typeof PromClient>('prom-client', 'metrics'), metrics, names.slotName, () => this.slotLag());
    if (!this.settings.relay) return;
    this.transports = resolveTransports(this.options, this.moduleRef, this.inProcessHandlers.transport());
    this.names = names;
    this.prefix = this.delivery.prefix;
    this.lock = new WalStreamLock(replicationConnection(this.connection), names.slotName, (error) => this.lockLost(error));
    this.position = new RememberedPosition(new WalPositionTable(this.connection, this.extras, names.slotName), this.logger);
  }

  /** The set-up's catalog changes in one transaction holding the set-up lock: instances that start together take turns. */
  private serialized<T>(work: (query: WalQuery) => Promise<T>): Promise<T> {
    return this.connection.transaction(async (run) => {
      const query: WalQuery = async (sql, params) => (await run({ sql, params: params ?? [] })).records;
      await query(walSetupLock);
      return work(query);
    });
  }

  onApplicationBootstrap(): void {
    if (!this.names) return;
    this.logger.log(`WAL relay streaming slot "${this.names.slotName}" (publication "${this.names.publicationName}") of "${OutboxTable.of(this.extras)}".`);
    // Connected now, while standing by: a takeover then publishes at once.
    for (const transport of new Set(this.transports.values())) void transport.connect?.().catch(() => undefined);
    this.read();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnect);
    const { relay, reader } = this;
    this.relay = undefined;
    this.reader = undefined;
    // Each step bounded: a broker or a database that does not answer must not hold the process.
    // What the stream had not confirmed comes again from the slot, to whichever instance streams next.
    if (relay) await this.steps.run('finishing the batch in flight', relay.stop(), this.settings.shutdownTimeoutMs + SHUTDOWN_STEP_TIMEOUT_MS);
    if (reader) await this.steps.run('closing the replication connection', reader.stop());
    if (this.position) await this.steps.run("saving the stream's position", this.position.flushed());
    // Last: a standby takes over as soon as this lock's connection ends.
    if (this.lock) await this.steps.run('releasing the stream lock', this.lock.release());
    this.steps.done();
  }

  [SHUTDOWN_STAGE](): string | undefined {
    return this.steps.stage;
  }


  onModuleDestroy(): void {
    this.removeMetrics?.();
    this.removeMetrics = undefined;
  }

  /**
   * The slot's lag (WAL retained, confirmation delay, whether an instance streams it), read at most
   * once per `stats.refreshIntervalMs` whoever asks (health, metrics); `undefined` without a slot.
   */
  slotLag(): Promise<WalSlotLag | undefined> {
    const slot = this.slot;
    if (!slot) return Promise.resolve(undefined);
    const now = Date.now();
    if (!this.lag || now - this.lag.at >= this.observability.stats.refreshIntervalMs) {
      const reading = walSlotState(this.query, slot.slotName);
      // A failed reading is not kept: the next caller tries again.
      reading.catch(() => this.lag?.reading === reading && (this.lag = undefined));
      this.lag = { at: now, reading };
    }
    return this.lag.reading;
  }

  /** Messages the stream has published since it last (re)connected. */
  get publishedCount(): number {
    return this.relay?.publishedCount ?? 0;
  }

  // Each connection gets a fresh relay: what the previous one had not confirmed comes again from
  // the slot, so its buffer is dropped, never published twice from memory.
  private read(): void {
    void this.stream().catch((error: unknown) => this.retryLater(error));
  }

  /** Waits for the stream lock (a standby waits here), then streams from the saved position. */
  private async stream(): Promise<void> {
    if (this.stopped || !this.names || !this.lock || !this.position) return;
    if (!this.lock.held) {
      await this.lock.acquire();
      this.lockedAt = Date.now();
    }
    if (this.stopped) return;
    const from = await this.position.read();
    if (this.stopped) return;
    const position = this.position;
    const { batchSize, publishTimeoutMs, backoff, retryIf } = this.settings;
    let reader: PgoutputReader | undefined = undefined;
    const relay = new StreamRelay({
      transports: this.transports,
      batchSize,
      maxBuffered: batchSize * BATCHES_AHEAD,
      publishTimeoutMs,
      retryPolicy: new RetryPolicy(Number.MAX_SAFE_INTEGER, backoff),
      retryIf,
      observer: this.observers.combined(),
      logger: this.logger,
      overflow: new TableOverflow(this.connection, this.extras, {
        notifyChannel: this.settings.notifications ? notificationChannel(this.extras) : undefined,
        deadLetterPolicy: this.settings.deadLetterPolicy,
      }),
      divertAfterAttempts: this.settings.wal.attemptsBeforeTable ?? WAL_DEFAULTS.attemptsBeforeTable,
      published: (messages) => position.published(messages),
      confirm: async (lsn, carriedMessages) => {
        await reader?.confirm(lsn);
        // Only positions past outbox messages are worth a write: a keepalive's would write after every write.
        if (carriedMessages) position.remember(lsn);
      },
      // Ends the stream (closing the replication connection) rather than holding it while retrying.
      onTableFailure: (error) => {
        void reader?.stop().catch(() => undefined);
        void this.restart(relay, new Error(walTableUnreachable(errorText(error))));
      },
    });
    reader = new PgoutputReader({
      ...this.names,
      connection: replicationConnection(this.connection),
      prefix: this.prefix,
      pausedTable: OutboxTable.of(this.extras).paused.name,
      // Streaming again: the next end is news, even with the same text as the last.
      onCommit: (commit) => ((this.lastEnd = undefined), relay.accept(commit)),
      onCaughtUp: (lsn) => ((this.lastEnd = undefined), relay.caughtUp(lsn)),
      onEnd: (error) => void this.restart(relay, error),
    });
    this.relay = relay;
    this.reader = reader;
    reader.start(from).catch((error: unknown) => void this.restart(relay, error));
  }

  /** The lock's connection ended while this instance streamed: another may take the slot, so this stream ends. */
  private lockLost(error: Error): void {
    const relay = this.relay;
    if (!relay) return;
    void this.reader?.stop().catch(() => undefined);
    void this.restart(relay, new Error(`the connection holding the stream lock ended (${errorText(error)})`));
  }

  /** Waiting for the lock or reading the saved position failed (the server is away): tried again later. */
  private retryLater(error: unknown): void {
    if (this.stopped) return;
    const text = errorText(error);
    if (text !== this.lastEnd) this.logger.warn(`WAL relay: cannot stream slot "${this.names?.slotName}" yet (${text}); trying again every ${RECONNECT_MS} ms.`);
    this.lastEnd = text;
    clearTimeout(this.reconnect);
    this.reconnect = setTimeout(() => this.read(), RECONNECT_MS);
  }

  private async restart(relay: StreamRelay, error: unknown): Promise<void> {
    // One reconnection per ended stream, however many ways it reported its end.
    if (this.restarting === relay) return;
    this.restarting = relay;
    await relay.stop();
    if (this.stopped || this.relay !== relay) return;
    const text = errorText(error);
    // The lock was just granted and the previous holder's WAL sender has not let go of the slot yet.
    const slotStillHeld = this.lock?.held === true && /is active for PID/i.test(text) && Date.now() - this.lockedAt < SLOT_RELEASE_MS;
    if (!slotStillHeld && text !== this.lastEnd) this.logger.warn(`WAL relay: the stream of slot "${this.names?.slotName}" ended (${text}); reading again in ${RECONNECT_MS} ms.`);
    if (!slotStillHeld) this.lastEnd = text;
    this.reconnect = setTimeout(() => this.read(), slotStillHeld ? SLOT_RETRY_MS : RECONNECT_MS);
  }
}
