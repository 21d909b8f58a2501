import type {
  EntityManager,
  EntityMetadata,
  EntitySubscriberInterface,
  InsertEvent,
  ObjectLiteral,
  QueryRunner,
  RemoveEvent,
  SoftRemoveEvent,
  TransactionCommitEvent,
  TransactionRollbackEvent,
  TransactionStartEvent,
  UpdateEvent,
} from 'typeorm';
import { OutboxWriteError } from '../core/outbox.errors';
import { missingAggregateId, missingEventType, saveOutsideTransaction } from '../core/outbox.messages';
import type { MessageDraft } from '../core/outbox-message.factory';
import { pendingEventsOf } from '../core/aggregate-events';
import type { RecordedEvent } from '../core/recorded-events';
import { getOutboxEventMetadata, getPublishesEventsOptions, type PublishesEventsOptions } from '../core/event-metadata';
import type { SqlOutboxWriter } from '../sql/sql-outbox.writer';
import type { SqlTransactionOf } from '../adapters/data-layer-transaction';
import type { OutboxTransactionTracker } from './outbox-transaction.tracker';

/**
 * Captures the recorded events of `@PublishesEvents` entities as they are saved and writes
 * them through the event's EntityManager, so the rows commit or roll back with the aggregate.
 * Inserts and updates are captured after the statement (generated ids are known by then),
 * removals before it (the id is still on the entity).
 */
export class OutboxEntitySubscriber implements EntitySubscriberInterface {
  constructor(
    private readonly writer: SqlOutboxWriter,
    private readonly transactionOf: SqlTransactionOf,
    private readonly tracker: OutboxTransactionTracker,
    private readonly onCommitted: () => void,
  ) {}

  beforeInsert(event: InsertEvent<ObjectLiteral>): void {
    this.requireTransaction(event.entity, event.metadata, event.queryRunner);
  }

  beforeUpdate(event: UpdateEvent<ObjectLiteral>): void {
    this.requireTransaction(event.entity, event.metadata, event.queryRunner);
  }

  afterInsert(event: InsertEvent<ObjectLiteral>): Promise<void> {
    return this.capture(event.entity, event.metadata, event.manager, event.queryRunner);
  }

  afterUpdate(event: UpdateEvent<ObjectLiteral>): Promise<void> {
    return this.capture(event.entity, event.metadata, event.manager, event.queryRunner);
  }

  beforeRemove(event: RemoveEvent<ObjectLiteral>): Promise<void> {
    this.requireTransaction(event.entity, event.metadata, event.queryRunner);
    return this.capture(event.entity, event.metadata, event.manager, event.queryRunner);
  }

  beforeSoftRemove(event: SoftRemoveEvent<ObjectLiteral>): Promise<void> {
    this.requireTransaction(event.entity, event.metadata, event.queryRunner);
    return this.capture(event.entity, event.metadata, event.manager, event.queryRunner);
  }

  afterTransactionStart(event: TransactionStartEvent): void {
    this.tracker.started(event.queryRunner);
  }

  afterTransactionCommit(event: TransactionCommitEvent): void {
    if (this.tracker.committed(event.queryRunner)) this.onCommitted();
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    this.tracker.rolledBack(event.queryRunner);
  }

  private requireTransaction(entity: ObjectLiteral | undefined, metadata: EntityMetadata, queryRunner: QueryRunner): void {
    const options = entity && getPublishesEventsOptions(entity);
    if (!options || queryRunner.isTransactionActive || pendingEventsOf(entity, aggregateTypeOf(options, metadata)).length === 0) return;
    throw new OutboxWriteError(saveOutsideTransaction(aggregateTypeOf(options, metadata)));
  }

  /**
   * Called after every save (see unchanged-save.guard): TypeORM runs no statement and calls no
   * subscriber for an entity with no changed column, so events recorded on it are written here, in
   * the caller's transaction, or in one of their own when the save had none to write in.
   */
  async afterSave(manager: EntityManager, entity: ObjectLiteral, target?: unknown): Promise<void> {
    if (!getPublishesEventsOptions(entity)) return;
    const metadata = manager.connection.getMetadata((target ?? entity.constructor) as Function);
    const queryRunner = manager.queryRunner;
    if (queryRunner?.isTransactionActive) return this.capture(entity, metadata, manager, queryRunner);
    if (!this.hasUnstaged(entity, metadata, queryRunner)) return;
    await manager.transaction((inner) => this.capture(entity, metadata, inner, inner.queryRunner!));
  }

  private hasUnstaged(entity: ObjectLiteral, metadata: EntityMetadata, queryRunner: QueryRunner | undefined): boolean {
    const options = getPublishesEventsOptions(entity)!;
    return pendingEventsOf(entity, aggregateTypeOf(options, metadata)).some(
      (recorded) => !queryRunner || !this.tracker.isStaged(queryRunner, recorded),
    );
  }

  private async capture(
    entity: ObjectLiteral | undefined,
    metadata: EntityMetadata,
    manager: EntityManager,
    queryRunner: QueryRunner,
  ): Promise<void> {
    const options = entity && getPublishesEventsOptions(entity);
    if (!options) return;
    const aggregateType = aggregateTypeOf(options, metadata);
    const pending = pendingEventsOf(entity, aggregateType).filter((recorded) => !this.tracker.isStaged(queryRunner, recorded));
    if (pending.length === 0) return;
    const aggregateId = aggregateIdOf(entity, metadata, aggregateType);
    const drafts = pending.map((recorded) => toDraft(recorded, aggregateType, aggregateId, options));
    await this.writer.write(this.transactionOf(manager), drafts);
    this.tracker.stage(queryRunner, entity, pending);
  }
}

function aggregateTypeOf(options: PublishesEventsOptions, metadata: EntityMetadata): string {
  return options.aggregateType ?? metadata.tableName;
}

function aggregateIdOf(entity: ObjectLiteral, metadata: EntityMetadata, aggregateType: string): string {
  const values = metadata.primaryColumns.map((column) => column.getEntityValue(entity));
  if (values.length === 0 || values.some((value) => value === undefined || value === null)) {
    throw new OutboxWriteError(missingAggregateId(aggregateType));
  }
  return values.map(String).join(':');
}

function toDraft(recorded: RecordedEvent, aggregateType: string, aggregateId: string, options: PublishesEventsOptions): MessageDraft {
  const eventMetadata = getOutboxEventMetadata(recorded.event);
  if (!eventMetadata) throw new OutboxWriteError(missingEventType(recorded.event.constructor?.name ?? 'An event'));
  return {
    type: eventMetadata.type,
    version: eventMetadata.version,
    aggregateType,
    aggregateId,
    payload: recorded.event,
    topic: eventMetadata.topic,
    aggregateTopic: options.topic,
    metadata: recorded.metadata,
    occurredAt: recorded.occurredAt,
  };
}
