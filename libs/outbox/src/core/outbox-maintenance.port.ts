import type { OutboxMessageStatus, RoutedEvent } from './outbox-message';

/** A dead message as operators see it, with every failed attempt. */
export interface DeadMessage extends RoutedEvent {
  position: string;
  attempts: number;
  lastError: string | null;
  errors: Array<{ at: string; error: string }>;
  occurredAt: string;
  deadAt: string | null;
}

/** What became of a requeue or discard: done, no such message, or the status that prevented it. */
export type DeadLetterOutcome = 'done' | 'missing' | Exclude<OutboxMessageStatus, 'dead'>;

/** Operator and cleanup access to the rows, next to the relay's `OutboxStore`. */
export interface OutboxMaintenanceStore {
  listDead(after: string, limit: number): Promise<DeadMessage[]>;
  requeue(id: string): Promise<DeadLetterOutcome>;
  discard(id: string): Promise<DeadLetterOutcome>;
  /** Deletes at most `limit` published rows older than `olderThanMs`; returns how many. */
  deletePublished(olderThanMs: number, limit: number): Promise<number>;
  /** Deletes at most `limit` dead or discarded rows that died more than `olderThanMs` ago. */
  deleteDead(olderThanMs: number, limit: number): Promise<number>;
}
