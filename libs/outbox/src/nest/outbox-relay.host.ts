import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost, ModuleRef } from '@nestjs/core';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { ofOutbox } from '../core/outbox-name';
import { listenerWouldHoldThePool, outboxTableUnreadable, unacknowledgedTransport } from '../core/outbox.messages';
import type { ResolvedOutboxSettings } from '../core/outbox-options';
import { OutboxRelay, type BatchOutcome } from '../core/outbox-relay';
import type { OutboxTransport } from '../core/outbox-transport.port';
import type { OutboxStore } from '../core/outbox-store.port';
import { RetryPolicy } from '../core/retry-policy';
import { createSqlOutboxStore } from '../sql/outbox-sql.factory';
import { driverTypeOf, type SqlConnection } from '../core/sql-connection.port';
import { OutboxTable } from '../sql/dialects/outbox-table';
import { PayloadTableSql } from '../sql/claim-check/payload-table.sql';
import { payloadsTableUnreadable } from '../core/claim-check/claim-check.messages';
import { notificationChannel, PostgresNotificationListener } from '../sql/postgres-notification.listener';
import { OUTBOX_CONNECTION, OUTBOX_DELIVERY, OUTBOX_EXTRAS, OUTBOX_SETTINGS } from './outbox.constants';
import type { DeliveryPlan } from '../core/stream/delivery-plan';
import type { ResolvedOutboxExtras } from './outbox.module-definition';
import { OUTBOX_MODULE_OPTIONS } from './outbox.module-definition';
import type { OutboxModuleOptions } from './outbox-module.options';
import { checkTransportOptions, resolveTransports } from './outbox-transports.resolver';
import { InProcessHandlers } from './in-process/in-process-handlers';
import { DelayedWakeUps } from '../core/delayed-wake-ups';
import { OutboxObservers } from './observe/outbox-observers.registry';
import { OutboxStats } from './observe/outbox.stats';
import type { OutboxStatsSnapshot } from '../core/stats/outbox-stats';
import { OutboxRelayStartGate } from './outbox-relay.start';
import { DatabaseUnreachableError, whileServerRestarts } from '../sql/server-restart';
import { SHUTDOWN_STAGE, SHUTDOWN_STEP_TIMEOUT_MS, type ReportsShutdownStage } from './shutdown/shutdown-stage';
import { declaredDestinations } from '../core/declared-destinations';
import { warmUpTransports } from './transport-warm-up';
import { ShutdownSteps } from './shutdown/shutdown-steps';

export function defaultRelayId(): string {
  return `${hostname().slice(0, 40)}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/**
 * Runs this instance's relay: checks the table and transports at module init, starts claiming at
 * bootstrap or later (`relayStart`), polls on an interval of its own, wakes it after commits, and
 * on shutdown stops claiming and hands back its leases before TypeORM and the clients are closed.
 */
@Injectable()
export class OutboxRelayHost implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown, ReportsShutdownStage {
  private readonly logger = new Logger('Outbox');
  private relay: OutboxRelay | undefined;
  private readonly delayed = new DelayedWakeUps(() => void this.drain());
  private listener: PostgresNotificationListener | undefined;
  private transports = new Map<string, OutboxTransport>();
  private store: OutboxStore | undefined;
  private gate: OutboxRelayStartGate | undefined;
  private warming: Promise<void> | undefined;
  private readonly steps = new ShutdownSteps("the outbox relay's", this.logger);

  constructor(
    @Inject(OUTBOX_SETTINGS) private readonly settings: ResolvedOutboxSettings,
    @Inject(OUTBOX_MODULE_OPTIONS) private readonly options: OutboxModuleOptions,
    @Inject(OUTBOX_EXTRAS) private readonly extras: ResolvedOutboxExtras,
    @Inject(OUTBOX_CONNECTION) private readonly connection: SqlConnection,
    @Inject(OUTBOX_DELIVERY) private readonly delivery: DeliveryPlan,
    private readonly moduleRef: ModuleRef,
    private readonly observers: OutboxObservers,
    private readonly outboxStats: OutboxStats,
    private readonly inProcessHandlers: InProcessHandlers,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  // A timer of its own rather than the app's SchedulerRegistry: a second ScheduleModule.forRoot()
  // would run the app's own @Interval/@Cron jobs twice, and the app need not import one at all.
  private pollTimer: NodeJS.Timeout | undefined;

  // Every check runs here, before any bootstrap hook starts a timer or a connection: a bad option
  // must fail the start and leave nothing behind that keeps the process alive (NestJS 11.0's close()
  // after a failed init runs no shutdown hook at all).
  /** With the claim check on, its payloads table must be there: a table made by an earlier version lacks it. */
  private async probePayloadsTable(restarts: { logger: Logger }): Promise<void> {
    if (!this.settings.claimCheck) return;
    const table = OutboxTable.on(driverTypeOf(this.connection.dialect), this.extras);
    const probe = new PayloadTableSql(table, this.connection.dialect).probe();
    await whileServerRestarts('reading the payloads table', () => this.connection.runner().rows(probe), restarts).catch((error: unknown) => {
      if (error instanceof DatabaseUnreachableError) throw error;
      throw new OutboxConfigurationError(payloadsTableUnreadable(table.payloads.toString(), table.name, error instanceof Error ? error.message : String(error)));
    });
  }

  async onModuleInit(): Promise<void> {
    const store = createSqlOutboxStore(this.connection, this.extras, {
      deadLetterPolicy: this.settings.deadLetterPolicy,
      deleteOnPublish: this.settings.cleanup.deleteOnPublish,
      preparedStatements: this.settings.preparedStatements,
      log: (message) => this.logger.log(message),
    });
    const restarts = { logger: this.logger };
    await whileServerRestarts('reading the outbox table', () => store.probe(), restarts).catch((error: unknown) => {
      if (error instanceof DatabaseUnreachableError) throw error;
      throw new OutboxConfigurationError(outboxTableUnreadable(this.extras, error instanceof Error ? error.message : String(error)));
    });
    await this.probePayloadsTable(restarts);
    checkTransportOptions(this.options);
    const gate = new OutboxRelayStartGate(OutboxRelayStartGate.resolve(this.options.relayStart), this.adapterHost, () => this.begin());
    if (!this.settings.relay) {
      this.logger.log(`Relay${ofOutbox(this.extras.name)} disabled on this instance (relay: false); rows are written to "${OutboxTable.of(this.extras)}" only.`);
      return;
    }
    // After the probe's await: the in-process handlers were discovered by then (a synchronous
    // onModuleInit of this module or of one it imports).
    const transports = resolveTransports(this.options, this.moduleRef, this.inProcessHandlers.transport());
    this.checkAcknowledgements(transports);
    this.checkListenerPool();
    gate.check();
    // What a streaming mode that ran here before left behind: refused while events would be lost.
    if (this.delivery.mode === 'table') for (const check of this.delivery.leftBehind) await check(this.connection, this.logger);
    this.transports = transports;
    this.store = store;
    this.gate = gate;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.store || !this.gate) return;
    // Before the first claim; with relayStart 'listen' or 'manual', at the start instead (see begin).
    if (this.gate.mode === 'bootstrap') await this.transportsReady();
    const { relayId, batchSize, maxBatchesInFlight, leaseMs, pollIntervalMs } = this.settings;
    // Notifications that arrive before the relay starts find no relay: its first round reads them.
    const wakeUps = await this.listenForCommits();
    this.logger.log(
      `Relay ${relayId}${ofOutbox(this.extras.name)} publishing "${OutboxTable.of(this.extras)}" through ${describeTransports(this.transports)}: poll every ${pollIntervalMs} ms, ` +
        `batches of ${batchSize} (${maxBatchesInFlight} in flight), lease ${leaseMs} ms; woken ${wakeUps}; ${this.gate.arm()}.`,
    );
  }

  /**
   * With `relayStart: 'manual'`: starts claiming; call it once every listener the relay may publish
   * to is up (e.g. after `await app.startAllMicroservices()`). Called before bootstrap, the relay
   * starts at bootstrap. A no-op when the relay runs already or is off (`relay: false`).
   */
  start(): void {
    this.gate?.request();
  }

  /**
   * The transports connected and the destinations the application declares readied (a Kafka
   * topic's metadata), once, before the first claim: the first batch then goes out as soon as it is
   * claimed instead of waiting for a connection and a metadata round trip. Bounded, never failing
   * the start (see `warmUpTransports`). The WAL stream waits for it at bootstrap too. Nothing when the relay is off.
   */
  transportsReady(): Promise<void> {
    this.warming ??= warmUpTransports(this.transports, declaredDestinations(this.settings), this.logger);
    return this.warming;
  }

  private begin(): void {
    const store = this.store;
    if (!store) return;
    const { relayId, leaseMs, publishTimeoutMs, maxAttempts, backoff, pollIntervalMs, batchSize, maxBatchesInFlight } = this.settings;
    this.relay = new OutboxRelay({
      store,
      transports: this.transports,
      retryPolicy: new RetryPolicy(maxAttempts, backoff),
      owner: relayId,
      batchSize,
      maxBatchesInFlight,
      leaseMs,
      publishTimeoutMs,
      logger: this.logger,
      observer: this.observers.combined(),
      retryIf: this.settings.retryIf,
      envelopeHeaders: this.settings.envelope.headers,
    });
    this.observers.activity.running = true;
    if (this.gate?.mode !== 'bootstrap') this.logger.log(`Relay ${relayId}${ofOutbox(this.extras.name)} started claiming (relayStart: '${this.gate?.mode}').`);
    const relay = this.relay;
    // Readied at bootstrap with relayStart 'bootstrap' (this resolves at once); with 'listen' or
    // 'manual', now that the app's listeners are up: a transport to a listener of this very app
    // would be refused at bootstrap.
    void this.transportsReady().then(() => {
      // Shut down meanwhile: no timer may outlive the relay.
      if (this.relay !== relay || !this.store) return;
      this.pollTimer = setInterval(() => void this.relay?.trigger(), pollIntervalMs);
      void relay.trigger();
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.delayed.stop();
    this.gate?.stop();
    if (!this.store) return;
    // Once only: a second shutdown call finds nothing left to stop or close.
    this.store = undefined;
    clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    const listener = this.listener;
    this.listener = undefined;
    if (listener) await this.steps.run('stopping the LISTEN connection', listener.stop());
    // relay.stop bounds its wait for the batches in flight by shutdownTimeoutMs; handing back the
    // leases is one more statement, which a database that does not answer could hold forever.
    const relay = this.relay;
    this.relay = undefined;
    if (relay) await this.steps.run('finishing the batches in flight and handing back leases', relay.stop(this.settings.shutdownTimeoutMs), this.settings.shutdownTimeoutMs + SHUTDOWN_STEP_TIMEOUT_MS);
    this.observers.activity.running = false;
    for (const transport of this.transports.values()) {
      const closing = transport.close?.().catch((error: unknown) => this.logger.warn(`Closing transport ${transport.name} failed: ${String(error)}`));
      if (closing) await this.steps.run(`closing transport "${transport.name}"`, closing);
    }
    this.steps.done();
  }

  [SHUTDOWN_STAGE](): string | undefined {
    return this.steps.stage;
  }


  /** A delayed row written by this process comes due in `delayMs`: wake then rather than at the next poll. */
  wakeIn(delayMs: number): void {
    if (this.settings.relay) this.delayed.schedule(delayMs);
  }

  /** Publishes what is claimable now; resolves when nothing is left. No-op when the relay is off. */
  drain(): Promise<void> {
    return this.relay?.trigger() ?? Promise.resolve();
  }

  /** Stats of the outbox table and of this relay; see `OutboxStats`. */
  stats(options: { fresh?: boolean } = {}): Promise<OutboxStatsSnapshot> {
    return this.outboxStats.snapshot(options);
  }

  /** One claim → publish → settle round, for tests and tools. */
  publishBatch(): Promise<BatchOutcome> {
    if (!this.relay) return Promise.resolve({ claimed: 0, published: 0, retried: 0, dead: 0 });
    return this.relay.publishBatch();
  }

  /** Cross-instance wake-up where the database offers it; says what wakes the relay, for the startup log. */
  private async listenForCommits(): Promise<string> {
    const local = 'after each commit in this process';
    if (this.connection.dialect !== 'postgres') {
      return `${local}; no cross-instance notifications on ${this.connection.dialect}, other instances' rows are found by polling`;
    }
    if (!this.settings.notifications) return `${local}; notifications off (notifications: false), other instances' rows are found by polling`;
    const channel = notificationChannel(this.extras);
    this.listener = new PostgresNotificationListener(this.connection, channel, () => void this.relay?.trigger(), this.logger);
    await this.listener.start();
    return `${local} and by LISTEN "${channel}" for commits anywhere`;
  }

  /** The LISTEN connection is taken from the app's pool and never given back while the relay runs. */
  private checkListenerPool(): void {
    if (this.connection.dialect !== 'postgres' || !this.settings.notifications) return;
    const poolSize = this.connection.poolSize;
    if (poolSize !== undefined && poolSize < 2) throw new OutboxConfigurationError(listenerWouldHoldThePool(poolSize));
  }

  private checkAcknowledgements(transports: Map<string, OutboxTransport>): void {
    for (const [name, transport] of transports) {
      if ((transport.acknowledgement ?? 'broker') === 'broker') continue;
      const why = transport.acknowledgementNote ?? 'it reports no acknowledgement';
      const label = name === 'default' ? transport.name : `${name} (${transport.name})`;
      if (this.settings.requireAcknowledgement) throw new OutboxConfigurationError(unacknowledgedTransport(label, why, true));
      this.logger.warn(unacknowledgedTransport(label, why, false));
    }
  }
}

function describeTransports(transports: Map<string, OutboxTransport>): string {
  return [...transports].map(([name, transport]) => (name === 'default' ? transport.name : `${name} (${transport.name})`)).join(', ');
}
