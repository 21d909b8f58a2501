import type { Provider } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { OutboxDataLayerTransaction } from '../../adapters/data-layer-transaction';
import type { OutboxMessageInput } from '../../core/outbox-message-input';
import { OutboxConfigurationError } from '../../core/outbox.errors';
import { validateOutboxName } from '../../core/outbox-name';
import { shardOf } from '../../core/shard-of';
import { shardsNeedTwo } from '../../core/outbox-name.messages';
import { OutboxPublisher } from '../outbox.publisher';
import { getOutboxToken } from './outbox-tokens';

/**
 * Writes each event to the outbox of its aggregate's shard: for an outbox table split into several
 * (one named outbox per table, each with its own relay), in one database or several. The shard is
 * `shardOf(aggregateId, shards.length)`, so an aggregate's events always go to the same table and
 * keep their order. The transaction must reach the shard's table: in one database, any of its
 * transactions; across databases, a transaction on the database of `shardFor(aggregateId)`.
 *
 * `ShardedOutboxPublisher.provide('ORDERS_OUTBOX', ['orders_0', 'orders_1', 'orders_2', 'orders_3'])`
 */
export class ShardedOutboxPublisher {
  constructor(
    readonly shards: readonly string[],
    private readonly publishers: readonly OutboxPublisher[],
  ) {}

  /** A provider of a `ShardedOutboxPublisher` over the named outboxes, in this order (the order is part of the placement: keep it). */
  static provide(token: string | symbol, shards: readonly string[]): Provider {
    if (!Array.isArray(shards) || shards.length < 2 || new Set(shards).size !== shards.length) throw new OutboxConfigurationError(shardsNeedTwo(shards));
    shards.forEach((name, index) => validateOutboxName(name, `shards[${index}]`));
    return {
      provide: token,
      inject: shards.map((name) => getOutboxToken(OutboxPublisher, name)),
      useFactory: (...publishers: OutboxPublisher[]) => new ShardedOutboxPublisher(shards, publishers),
    };
  }

  /** The name of the outbox that holds the aggregate's events. */
  shardFor(aggregateId: string): string {
    return this.shards[shardOf(aggregateId, this.shards.length)];
  }

  /**
   * Writes each message through its shard's outbox in `transaction` (a TypeORM EntityManager or any
   * data layer's transaction, as `OutboxPublisher.add`); resolves with the ids in the order given.
   */
  async add(transaction: EntityManager | OutboxDataLayerTransaction, messages: OutboxMessageInput | OutboxMessageInput[]): Promise<string[]> {
    const list = Array.isArray(messages) ? messages : [messages];
    const byShard = new Map<number, number[]>();
    list.forEach((message, index) => {
      const shard = shardOf(message.aggregateId, this.shards.length);
      byShard.set(shard, [...(byShard.get(shard) ?? []), index]);
    });
    const ids = new Array<string>(list.length);
    // One shard after another: the shards' writes share the transaction's one connection.
    for (const [shard, indexes] of byShard) {
      const written = await this.publishers[shard].add(transaction as OutboxDataLayerTransaction, indexes.map((index) => list[index]));
      indexes.forEach((index, i) => (ids[index] = written[i]));
    }
    return ids;
  }
}
