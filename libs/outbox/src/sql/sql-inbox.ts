import { OutboxConfigurationError } from '../core/outbox.errors';
import type { InboxOutcome } from '../core/inbox/inbox.port';
import { checkConsumerName, looksLikeEnvelope } from '../core/inbox/inbox-settings';
import { invalidMessageId } from '../core/inbox/inbox.messages';
import { envelopeOfCloudEvent, type ReceivedKafkaMessage } from '../core/cloudevents/received-cloud-event';
// The inbox SQL is a plain text builder; it moves to this folder with the stores.
import { DEFAULT_INBOX_TABLE, inboxDialectFor } from './inbox/inbox-sql.dialect';
import { affectedRowsUnknown } from './sql-outbox.messages';
import type { SqlDialectName, SqlTransaction } from '../core/sql-transaction.port';

/**
 * The inbox inside a transaction the caller opened: the (consumer, message id) mark is inserted
 * first, in that transaction, and the work runs only when this call inserted it. So the mark and
 * the work's writes commit or roll back together; a redelivery finds the mark; a concurrent
 * delivery of the same message waits on the mark's key until the first transaction ends, then
 * skips (or runs, if the first rolled back). Same table and SQL as `OutboxInbox`.
 */
export class SqlInbox {
  private readonly marks: Record<SqlDialectName, string>;

  constructor(readonly tableName: string = DEFAULT_INBOX_TABLE) {
    // PostgreSQL and SQLite end in RETURNING: a row back means this call recorded the mark. MariaDB's
    // INSERT IGNORE returns no rows: the affected-row count tells instead.
    this.marks = {
      postgres: inboxDialectFor('postgres', tableName).mark,
      sqlite: inboxDialectFor('better-sqlite3', tableName).mark,
      mariadb: inboxDialectFor('mariadb', tableName).mark,
    };
  }

  async process<R>(transaction: SqlTransaction, delivery: { id: string } | string | ReceivedKafkaMessage, consumer: string, work: () => Promise<R> | R): Promise<InboxOutcome<R>> {
    // A CloudEvent's id is the outbox message id.
    const message = (envelopeOfCloudEvent(delivery) ?? delivery) as { id?: unknown } | string;
    checkConsumerName(consumer);
    const messageId = typeof message === 'string' ? message : looksLikeEnvelope(message) || typeof message?.id === 'string' ? (message.id as string) : undefined;
    if (typeof messageId !== 'string' || messageId === '' || messageId.length > 255) {
      throw new OutboxConfigurationError(invalidMessageId(consumer, typeof message === 'object' ? message?.id : message));
    }
    if (!(await this.mark(transaction, consumer, messageId))) return { duplicate: true };
    return { duplicate: false, result: await work() };
  }

  private async mark(transaction: SqlTransaction, consumer: string, messageId: string): Promise<boolean> {
    const sql = this.marks[transaction.dialect];
    if (transaction.dialect !== 'mariadb') return (await transaction.query(sql, [consumer, messageId])).length > 0;
    const affected = await transaction.execute(sql, [consumer, messageId]);
    // Without the count a duplicate and a first delivery look alike: refuse rather than guess.
    if (typeof affected !== 'number') throw new OutboxConfigurationError(affectedRowsUnknown(transaction.layer));
    return affected > 0;
  }
}
