import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { OutboxWriteError } from '../core/outbox.errors';
import { noAmbientTransaction } from '../core/outbox.messages';
import type { OutboxMessageInput } from '../core/outbox-message-input';
import { isDataLayerTransaction, type OutboxDataLayerTransaction, type SqlTransactionOf } from '../adapters/data-layer-transaction';
import type { SqlOutboxWriter } from '../sql/sql-outbox.writer';
import { AmbientTransactionResolver } from './ambient/ambient-transaction.resolver';
import { OUTBOX_TRANSACTION_OF, OUTBOX_WRITER } from './outbox.constants';

/** Adds messages to the outbox inside a transaction you already have, without an aggregate. */
@Injectable()
export class OutboxPublisher {
  constructor(
    @Inject(OUTBOX_WRITER) private readonly writer: SqlOutboxWriter,
    private readonly ambient: AmbientTransactionResolver,
    @Inject(OUTBOX_TRANSACTION_OF) private readonly transactionOf: SqlTransactionOf,
  ) {}

  /**
   * Writes the messages through `manager`, so they commit or roll back with its transaction.
   * Resolves with the message ids. Throws if `manager` is not inside a transaction.
   */
  add(manager: EntityManager, messages: OutboxMessageInput | OutboxMessageInput[]): Promise<string[]>;
  /**
   * Writes the messages through a transaction of another data layer: a Prisma interactive
   * transaction client, a Drizzle or Kysely transaction, a MikroORM EntityManager inside
   * `em.transactional`, a node-postgres client after BEGIN, or your own `SqlTransaction`.
   * Throws if it is not inside a transaction, naming what to pass instead.
   */
  add(transaction: OutboxDataLayerTransaction, messages: OutboxMessageInput | OutboxMessageInput[]): Promise<string[]>;
  /**
   * Writes the messages in the ambient transaction: inside a `@Transactional()` method of
   * `@nestjs-cls/transactional` or `typeorm-transactional`. Throws when there is none.
   */
  add(messages: OutboxMessageInput | OutboxMessageInput[]): Promise<string[]>;
  add(
    managerOrMessages: EntityManager | OutboxDataLayerTransaction | OutboxMessageInput | OutboxMessageInput[],
    messages?: OutboxMessageInput | OutboxMessageInput[],
  ): Promise<string[]> {
    // With two arguments the first is a transaction: one of no known layer is refused, not taken for messages.
    if (messages !== undefined || isDataLayerTransaction(managerOrMessages)) return this.addThrough(managerOrMessages, messages ?? []);
    const manager = this.ambient.current();
    if (!manager) return Promise.reject(new OutboxWriteError(noAmbientTransaction()));
    return this.addThrough(manager, managerOrMessages as OutboxMessageInput | OutboxMessageInput[]);
  }

  // Async, so that a transaction refused by its adapter rejects the returned promise rather than throwing.
  private async addThrough(transaction: unknown, messages: OutboxMessageInput | OutboxMessageInput[]): Promise<string[]> {
    return this.writer.add(this.transactionOf(transaction), messages);
  }
}
