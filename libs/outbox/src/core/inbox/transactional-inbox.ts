import { AsyncLocalStorage } from 'node:async_hooks';
import { OutboxConfigurationError, OutboxWriteError } from '../outbox.errors';
import type { InboxOutcome } from './inbox.port';
import { checkConsumerName } from './inbox-settings';
import { invalidMessageId, outsideInboxTransaction } from './inbox.messages';
import { checkMessageId, decodeEnvelope, type Decoded } from '../poison/poison-decoding';
import { envelopeOfCloudEvent } from '../cloudevents/received-cloud-event';
import type { PoisonPolicy } from '../poison/poison-policy';
import type { PoisonRecord } from '../poison/poison.port';

/**
 * How `process` reads a delivery: `id` (an envelope, `{ id }` or a bare id) or `envelope` (every field of an outbox envelope checked).
 * Either way a CloudEvent is read too (a structured one, or a Kafka message in binary or structured mode): its id is the message id.
 */
export type InboxDecoding = 'id' | 'envelope';

/** Opens a transaction `T`, runs `work` in it and commits, or rolls back if `work` throws. */
export type InboxTransactionOpener<T> = <R>(work: (transaction: T) => Promise<R>) => Promise<R>;

/** Writes the (consumer, message id) mark in a transaction `T`; `true` when this call wrote it. */
export interface InboxMarker<T> {
  mark(transaction: T, consumer: string, messageId: string): Promise<boolean>;
}

/**
 * Runs a consumer's work at most once per message, in transactions it opens itself on any data
 * layer `T` (TypeORM's EntityManager, the library's own connection): the mark is inserted first,
 * in the transaction that then runs the work, so both commit or neither does. A redelivery finds
 * the mark and is skipped; a concurrent delivery of the same message waits on the mark's key until
 * the first transaction ends, then skips (or runs, if the first rolled back). With a poison policy,
 * a delivery that cannot be decoded, or whose work fails past the policy's limit, is recorded and
 * resolves `{ setAside }`: the caller acknowledges it. The failure is counted after the rollback,
 * which is why the inbox must own the transaction for the policy to apply.
 */
export class TransactionalInbox<T> {
  private readonly current = new AsyncLocalStorage<T>();

  constructor(
    private readonly marker: InboxMarker<T>,
    private readonly open: InboxTransactionOpener<T>,
    /** Without one, a delivery without a usable id throws and a failing one is retried for ever, as before the policy existed. */
    readonly poison?: PoisonPolicy<T>,
  ) {}

  async process<R>(message: unknown, consumer: string, work: (transaction: T) => Promise<R> | R, decoding: InboxDecoding = 'id'): Promise<InboxOutcome<R>> {
    checkConsumerName(consumer);
    // Without the policy only the id is checked, as before it existed: a stricter check could only turn deliveries into errors.
    const decoded = decode(message, this.poison ? decoding : 'id');
    if (!decoded.ok) {
      if (!this.poison) throw new OutboxConfigurationError(invalidMessageId(consumer, typeof message === 'object' ? (message as { id?: unknown } | null)?.id : message));
      return { duplicate: false, setAside: await this.poison.undecodable(consumer, message, decoded.reason) };
    }
    const { messageId } = decoded;
    try {
      return await this.open(async (transaction): Promise<InboxOutcome<R>> => {
        if (!(await this.marker.mark(transaction, consumer, messageId))) return { duplicate: true };
        // A `failing` record of this message (it failed before) is left to PoisonStore.sweep: now marked, it is no longer shown.
        return { duplicate: false, result: await this.current.run(transaction, () => work(transaction)) };
      });
    } catch (error) {
      const record = await this.poison?.failed(consumer, messageId, message, error);
      if (!record) throw error;
      return { duplicate: false, setAside: record };
    }
  }

  /**
   * Runs a recorded message through `work` again, as a first delivery: the record is deleted and the
   * mark the set-aside wrote replaced, in the work's transaction. Resolves `{ replayed: false }` when
   * a concurrent replay took the record first (it waited on the record's row, then found it gone).
   * On failure nothing is changed but the record's attempts and reason.
   */
  async replay<R>(record: PoisonRecord, work: (message: unknown, transaction: T) => Promise<R> | R): Promise<{ replayed: true; result: R } | { replayed: false }> {
    const poison = this.poison!;
    const messageId = record.messageId!;
    const message: unknown = JSON.parse(record.raw);
    try {
      return await this.open(async (transaction) => {
        if (!(await poison.store.claim(transaction, record.consumer, record.key))) return { replayed: false as const };
        await poison.store.unmark(transaction, record.consumer, messageId);
        await this.marker.mark(transaction, record.consumer, messageId);
        const result = await this.current.run(transaction, () => work(message, transaction));
        return { replayed: true as const, result };
      });
    } catch (error) {
      await poison.failed(record.consumer, messageId, message, error, 1).catch(() => undefined);
      throw error;
    }
  }

  /** The transaction running the current handler; throws outside one. */
  transaction(): T {
    const transaction = this.current.getStore();
    if (transaction === undefined) throw new OutboxWriteError(outsideInboxTransaction());
    return transaction;
  }
}

function decode(delivery: unknown, decoding: InboxDecoding): Decoded {
  const message = envelopeOfCloudEvent(delivery) ?? delivery;
  if (decoding === 'envelope') return decodeEnvelope(message);
  if (typeof message === 'string') return checkMessageId(message);
  return typeof message === 'object' && message !== null ? checkMessageId((message as { id?: unknown }).id) : checkMessageId(message);
}
