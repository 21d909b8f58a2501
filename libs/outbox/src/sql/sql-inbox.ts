import { OutboxConfigurationError } from '../core/outbox.errors';
import type { InboxOutcome } from '../core/inbox/inbox.port';
import { checkConsumerName, looksLikeEnvelope } from '../core/inbox/inbox-settings';
import { invalidMessageId } from '../core/inbox/inbox.messages';
// The inbox SQL is a plain text builder; it moves to this folder with the stores.
import { DEFAULT_INBOX_TABLE, inboxDialectFor } from './inbox/inbox-sql.dialect';
import { inboxNotOffered } from './sql-outbox.messages';
import type { SqlTransaction } from './sql-transaction.port';

/**
 * The inbox inside a transaction the caller opened: the (consumer, message id) mark is inserted
 * first, in that transaction, and the work runs only when this call inserted it. So the mark and
 * the work's writes commit or roll back together; a redelivery finds the mark; a concurrent
 * delivery of the same message waits on the mark's key until the first transaction ends, then
 * skips (or runs, if the first rolled back). Same table and SQL as `OutboxInbox`.
 */
export class SqlInbox {
  private readonly marks: Record<'postgres' | 'sqlite', string>;

  constructor(readonly tableName: string = DEFAULT_INBOX_TABLE) {
    // Both statements end in RETURNING: a row back means this call recorded the mark.
    this.marks = { postgres: inboxDialectFor('postgres', tableName).mark, sqlite: inboxDialectFor('better-sqlite3', tableName).mark };
  }

  async process<R>(transaction: SqlTransaction, message: { id: string } | string, consumer: string, work: () => Promise<R> | R): Promise<InboxOutcome<R>> {
    checkConsumerName(consumer);
    const messageId = typeof message === 'string' ? message : looksLikeEnvelope(message) || typeof message?.id === 'string' ? message.id : undefined;
    if (typeof messageId !== 'string' || messageId === '' || messageId.length > 255) {
      throw new OutboxConfigurationError(invalidMessageId(consumer, typeof message === 'object' ? message?.id : message));
    }
    if (transaction.dialect === 'mariadb') throw new OutboxConfigurationError(inboxNotOffered(transaction.layer));
    const inserted = await transaction.query(this.marks[transaction.dialect], [consumer, messageId]);
    if (inserted.length === 0) return { duplicate: true };
    return { duplicate: false, result: await work() };
  }
}
