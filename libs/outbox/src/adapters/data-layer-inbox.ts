import type { ReceivedKafkaMessage } from '../core/cloudevents/received-cloud-event';
import type { InboxOutcome } from '../core/inbox/inbox.port';
import { SqlInbox } from '../sql/sql-inbox';
import { toSqlTransaction, type OutboxDataLayerTransaction } from './data-layer-transaction';

/**
 * The idempotent consumer for apps on Prisma, Drizzle, Kysely, MikroORM or pg: records that
 * `consumer` processed a message in the transaction the handler's work runs in. A plain class (no
 * module needed); `tableName` is the inbox table, default `outbox_inbox` (made by the
 * `CreateInboxTable` migration). Pruning stays with `OutboxInboxModule`.
 */
export class OutboxDataLayerInbox {
  private readonly inbox: SqlInbox;

  constructor(tableName?: string) {
    this.inbox = new SqlInbox(tableName);
  }

  /**
   * Runs `work` unless `consumer` already processed `message` (an envelope or its id), recording
   * it in `transaction`: resolves `{ duplicate: true }` for a message already processed. If `work`
   * throws, let the transaction roll back (the layers' own transaction callbacks do): the mark goes
   * with it, and a redelivery runs the work again.
   */
  async process<R>(transaction: OutboxDataLayerTransaction, message: { id: string } | string | ReceivedKafkaMessage, consumer: string, work: () => Promise<R> | R): Promise<InboxOutcome<R>> {
    return this.inbox.process(toSqlTransaction(transaction), message, consumer, work);
  }
}
