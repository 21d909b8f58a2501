import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import type { InboxOutcome } from '../../core/inbox/inbox.port';
import type { ResolvedInboxSettings } from '../../core/inbox/inbox-settings';
import { OutboxConfigurationError } from '../../core/outbox.errors';
import { inboxRunTransactionWithConnection, inboxTableMissing } from '../../core/inbox/inbox.messages';
import { poisonTableMissing } from '../../core/poison/poison.messages';
import { PoisonPolicy } from '../../core/poison/poison-policy';
import { errorText } from '../../core/error-text';
import { TypeOrmInbox } from '../../typeorm/inbox/typeorm-inbox';
import { TypeOrmInboxStore } from '../../typeorm/inbox/typeorm-inbox.store';
import { TypeOrmPoisonStore } from '../../typeorm/poison/typeorm-poison.store';
import type { TransactionalInbox } from '../../core/inbox/transactional-inbox';
import { connectionInbox } from '../../sql/inbox/connection-inbox';
import type { SqlPoisonStore } from '../../sql/poison/sql-poison.store';
import { serializeSqliteTransactions } from '../../typeorm/sqlite/serialized-transactions';
import type { OutboxInboxModuleOptions } from './outbox-inbox.options';
import { INBOX_CONNECTION, INBOX_DATA_SOURCE, INBOX_EXTRAS, type ResolvedInboxExtras } from './outbox-inbox.module-definition';
import type { OpenedConnection } from '../../adapters/connection/open-connection';
import { toSqlTransaction, type OutboxDataLayerTransaction } from '../../adapters/data-layer-transaction';
import { SqlInbox } from '../../sql/sql-inbox';
import { SqlInboxStore } from '../../sql/inbox/sql-inbox.store';
import { pruneInBatches } from '../../core/inbox/prune-batches';
import { PoisonReplays } from './poison-replays';
import type { ReceivedKafkaMessage } from '../../core/cloudevents/received-cloud-event';
import { SHUTDOWN_STAGE, SHUTDOWN_STEP_TIMEOUT_MS, type ReportsShutdownStage } from '../shutdown/shutdown-stage';
import { ShutdownSteps } from '../shutdown/shutdown-steps';
import { DatabaseUnreachableError, whileServerRestarts } from '../../sql/server-restart';
import { ClaimedPayloadReader } from '../../core/claim-check/claimed-payload.reader';
import { DatabasePayloadStore } from '../../sql/claim-check/database-payload.store';
import { S3PayloadReader } from '../../adapters/s3/s3-payload.store';
import { DEFAULT_OUTBOX_TABLE } from '../../sql/dialects/outbox-table';
import type { SqlRunner } from '../../core/sql-connection.port';
import type { SqlDialectName } from '../../core/sql-transaction.port';
import type { InboxClaimCheckOptions } from './outbox-inbox.options';

export const INBOX_SETTINGS = Symbol('outbox:inbox-settings');

/**
 * The idempotent-consumer API: `process(envelope, 'consumer-name', (tx) => work)` runs the work
 * once per message and consumer, in a transaction that also records the message as seen: a TypeORM
 * EntityManager, or, with the module's `connection` option, an `SqlTransaction` the inbox opens
 * on that connection (name it as the type argument: `manager<SqlTransaction>()`).
 * Applies the poison policy, prunes old marks and runs replays asked for from the CLI on a schedule.
 */
@Injectable()
export class OutboxInbox implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown, ReportsShutdownStage {
  private readonly logger = new Logger('OutboxInbox');
  // The transaction type is the data layer's, fixed by the module's options: EntityManager or SqlTransaction.
  private readonly inbox: TransactionalInbox<any>;
  private readonly marks: SqlInbox;
  private readonly store: { probe(): Promise<void>; prune(olderThanMs: number, limit: number): Promise<number> };
  private readonly poisonStore: SqlPoisonStore<any> | undefined;
  /** Recorded poison messages: list, replay, delete. `undefined` with `poison: false`. */
  readonly poison: PoisonReplays | undefined;
  private timers: NodeJS.Timeout[] = [];
  private pruning: Promise<number> | undefined;
  private readonly steps = new ShutdownSteps("the inbox's", this.logger);
  /** On SQLite, consumers' transactions take turns on TypeORM's one connection, with or without OutboxModule. */
  private readonly unserialize: () => void;
  /** Puts claim-checked payloads back into envelopes, before the handler's work runs: in its transaction, or on `runner`. */
  private readonly payloads: (runner: SqlRunner) => ClaimedPayloadReader;

  constructor(
    @Inject(INBOX_SETTINGS) private readonly settings: ResolvedInboxSettings<OutboxInboxModuleOptions>,
    @Inject(INBOX_EXTRAS) private readonly extras: ResolvedInboxExtras,
    @Inject(INBOX_DATA_SOURCE) dataSource: DataSource | null,
    @Inject(INBOX_CONNECTION) private readonly opened: OpenedConnection,
  ) {
    this.marks = new SqlInbox(extras.tableName);
    if (!dataSource) {
      // With `connection`: the inbox opens its transactions on the connection; the handler's writes join them through `transaction()`.
      if (settings.runTransaction) throw new OutboxConfigurationError(inboxRunTransactionWithConnection());
      const built = connectionInbox(opened.connection, { inbox: extras.tableName, poison: extras.poisonTableName }, settings.poison || undefined);
      this.unserialize = () => undefined;
      this.store = new SqlInboxStore(opened.connection, extras.tableName);
      this.inbox = built.inbox;
      this.poisonStore = built.poisonStore;
    } else {
      this.unserialize = serializeSqliteTransactions(dataSource);
      this.poisonStore = settings.poison ? new TypeOrmPoisonStore(dataSource, extras.poisonTableName, extras.tableName) : undefined;
      const policy = this.poisonStore && settings.poison ? new PoisonPolicy(this.poisonStore, settings.poison) : undefined;
      const inbox = new TypeOrmInbox(dataSource, new TypeOrmInboxStore(dataSource, extras.tableName), settings.runTransaction, policy);
      this.store = inbox.store;
      this.inbox = inbox;
    }
    this.poison = this.poisonStore ? new PoisonReplays(this.inbox, this.poisonStore) : undefined;
    this.payloads = claimedPayloadReaders(settings.claimCheck, opened.connection.dialect);
  }

  async onApplicationBootstrap(): Promise<void> {
    const restarts = { logger: this.logger };
    await whileServerRestarts('reading the inbox table', () => this.store.probe(), restarts).catch((error: unknown) => {
      if (error instanceof DatabaseUnreachableError) throw error;
      throw new OutboxConfigurationError(inboxTableMissing(this.extras.tableName, errorText(error)));
    });
    const poisonStore = this.poisonStore;
    if (poisonStore) {
      await whileServerRestarts('reading the poison table', () => poisonStore.probe(), restarts).catch((error: unknown) => {
        if (error instanceof DatabaseUnreachableError) throw error;
        throw new OutboxConfigurationError(poisonTableMissing(this.extras.poisonTableName, errorText(error)));
      });
    }
    if (this.settings.pruneIntervalMs > 0) {
      this.every(this.settings.pruneIntervalMs, () => this.pruneNow(), 'Inbox pruning failed');
    }
    if (this.poison && this.settings.replayPollMs > 0) {
      const replays = this.poison;
      this.every(this.settings.replayPollMs, () => replays.runRequested(this.logger), 'Looking for requested replays failed');
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    if (this.pruning) await this.steps.run('waiting for the pruning run', this.pruning);
    if (this.poison) await this.steps.run('waiting for the poison replay run', this.poison.idle());
    this.steps.done();
  }

  async onApplicationShutdown(): Promise<void> {
    this.unserialize();
    await this.steps.run("closing the inbox's connection pool", this.opened.close());
    this.steps.done();
  }

  [SHUTDOWN_STAGE](): string | undefined {
    return this.steps.stage;
  }


  /**
   * Runs `work` in a transaction unless `consumer` has already processed `message` (an outbox
   * envelope or its id, a structured CloudEvent, or a Kafka message holding a CloudEvent in either
   * mode: its id is the outbox message id). Resolves `{ duplicate: true }` for a message already processed: the caller
   * acknowledges it and moves on. If `work` throws, the transaction rolls back with the mark, and
   * the error is rethrown so the broker redelivers, until the poison policy sets the message aside:
   * then (and at once for a message without a valid id) it resolves `{ setAside: record }`, and the
   * caller acknowledges it too. `work` gets the transaction: TypeORM's EntityManager, or with
   * `connection` an `SqlTransaction` (`tx.query(sql, params)`, `OutboxPublisher.add(tx, …)`).
   */
  async process<R, T = EntityManager>(message: { id: string } | string | ReceivedKafkaMessage, consumer: string, work: (transaction: T) => Promise<R> | R): Promise<InboxOutcome<R>> {
    return this.inbox.process(message, consumer, this.withPayload(message, work));
  }


  /**
   * Records `message` for `consumer` in `transaction`, a transaction of another data layer (Prisma,
   * Drizzle, Kysely, MikroORM, pg: what `OutboxPublisher.add` takes), and runs `work` unless it was
   * already processed: `{ duplicate: true }` then. If `work` throws, let the transaction roll back:
   * the mark goes with it, and a redelivery runs the work again. PostgreSQL and SQLite. The poison
   * policy does not apply here: the transaction is yours, and ends after this call returns.
   */
  processIn<R>(transaction: OutboxDataLayerTransaction, message: { id: string } | string | ReceivedKafkaMessage, consumer: string, work: () => Promise<R> | R): Promise<InboxOutcome<R>> {
    const sqlTransaction = toSqlTransaction(transaction);
    return this.marks.process(sqlTransaction, message, consumer, () => this.withPayload(message, () => work())(sqlTransaction));
  }

  /** `process` for a delivery that must be a whole outbox envelope (every field's type is checked): what `@Idempotent()` uses. */
  async processEnvelope<R, T = EntityManager>(message: unknown, consumer: string, work: (transaction: T) => Promise<R> | R): Promise<InboxOutcome<R>> {
    return this.inbox.process(message, consumer, this.withPayload(message, work), 'envelope');
  }

  /**
   * Puts a claim-checked payload back into `envelope` (in place, and resolves it): fetched from its
   * store and checked against the reference's size and SHA-256. An envelope without the
   * `outbox-claim-check` header is returned as it is. Fails with a `ClaimCheckError` naming the
   * reference when the payload is missing or altered. `process` and `@Idempotent()` do it for you.
   */
  resolvePayload<E extends { headers?: Record<string, unknown>; payload?: unknown }>(envelope: E): Promise<E> {
    return this.payloads(this.opened.connection.runner()).resolve(envelope);
  }

  /**
   * The work, after the message's claim-checked payload is fetched through the work's own
   * transaction: a failure counts as the handler's (poison policy), and SQLite's one connection,
   * which the transaction holds, is not asked for twice.
   */
  private withPayload<T, R>(message: unknown, work: (transaction: T) => Promise<R> | R): (transaction: T) => Promise<R> {
    return async (transaction) => {
      if (typeof message === 'object' && message !== null && 'headers' in message && 'payload' in message) {
        const query = (transaction as { query(sql: string, params: unknown[]): Promise<Record<string, unknown>[]> }).query.bind(transaction);
        await this.payloads({ rows: ({ sql, params }) => query(sql, params) }).resolve(message as { headers?: Record<string, unknown>; payload?: unknown });
      }
      return work(transaction);
    };
  }

  /**
   * The transaction of the handler now running (an `@Idempotent()` handler, or the work given to
   * `process`): TypeORM's EntityManager, or with `connection` the inbox's `SqlTransaction`.
   * Only writes made through it commit or roll back with the mark.
   */
  manager<T = EntityManager>(): T {
    return this.inbox.transaction() as T;
  }

  /** Deletes marks older than `retentionMs` now; resolves with how many went. */
  pruneNow(): Promise<number> {
    this.pruning ??= pruneInBatches((ms, limit) => this.store.prune(ms, limit), this.settings.retentionMs, this.settings.pruneBatchSize).finally(() => (this.pruning = undefined));
    return this.pruning;
  }

  private every(ms: number, task: () => Promise<unknown>, failure: string): void {
    const timer = setInterval(() => void task().catch((error: unknown) => this.logger.warn(`${failure}: ${errorText(error)}`)), ms);
    timer.unref();
    this.timers.push(timer);
  }
}

/** The readers of claim-checked payloads: the producing outbox's payloads table in the inbox's own database, read on a runner given per message, and any given. */
function claimedPayloadReaders(options: InboxClaimCheckOptions | undefined, dialect: SqlDialectName): (runner: SqlRunner) => ClaimedPayloadReader {
  const outboxTable = options?.outboxTable ?? DEFAULT_OUTBOX_TABLE;
  const own = outboxTable === false ? undefined : new DatabasePayloadStore({ tableName: outboxTable, schema: options?.schema });
  const bucket = options?.bucket === undefined ? [] : [new S3PayloadReader({ bucket: options.bucket, prefix: '', s3Client: options.s3Client, s3Config: options.s3Config })];
  const others = [...bucket, ...(options?.readers ?? [])];
  return (runner) => new ClaimedPayloadReader([...(own ? [own.reader(dialect, runner)] : []), ...others]);
}
