import type { PublishFailure } from './failure-classification';
import type { ClaimedMessage } from './outbox-message';

/*
 * A claimed batch may carry runs: consecutive rows of one aggregate and destination (its key).
 * The relay keeps their order: a row is sent only after the rows before it in its run succeeded,
 * and the rows behind a failure are not sent but given back to the store, uncharged.
 */

/** A row behind a failed (or undecodable) row of its aggregate in the same batch: not sent, given back. */
export const NOT_SENT: unique symbol = Symbol('not sent');
export type SendResult = PublishFailure | undefined | typeof NOT_SENT;

/**
 * The ordering rule's key: rows of one aggregate for one transport and destination go out in order.
 * Each part is prefixed with its length, so no two tuples share a key whatever characters they hold
 * (built once per row per batch: cheaper than JSON text of an array).
 */
export function orderingKey(message: Pick<ClaimedMessage, 'aggregateType' | 'aggregateId' | 'transport' | 'destination'>): string {
  const { aggregateType, aggregateId, transport, destination } = message;
  return `${aggregateType.length}:${aggregateType}${aggregateId.length}:${aggregateId}${transport.length}:${transport}${destination.length}:${destination}`;
}

/** Indexes of the messages, one list per aggregate and destination, each in batch (position) order. */
export function runsByKey(messages: ClaimedMessage[]): number[][] {
  const runs = new Map<string, number[]>();
  messages.forEach((message, index) => {
    const key = orderingKey(message);
    const run = runs.get(key);
    if (run) run.push(index);
    else runs.set(key, [index]);
  });
  return [...runs.values()];
}

/** The same failure for the first row of each aggregate; the rows behind it are not sent. */
export function inOrderOfKey(messages: ClaimedMessage[], failure: () => PublishFailure): SendResult[] {
  const results = new Array<SendResult>(messages.length).fill(NOT_SENT);
  for (const [first] of runsByKey(messages)) results[first] = failure();
  return results;
}

/** Undecodable rows go dead alone; the rows behind one in its aggregate wait for the next claim. */
export function holdBackBehindPoison(messages: ClaimedMessage[], undecodable: ReadonlyMap<string, string>): { sendable: ClaimedMessage[]; heldBack: string[] } {
  if (undecodable.size === 0) return { sendable: messages, heldBack: [] };
  const poisoned = new Set<string>();
  const sendable: ClaimedMessage[] = [];
  const heldBack: string[] = [];
  for (const message of messages) {
    const key = orderingKey(message);
    if (undecodable.has(message.position)) poisoned.add(key);
    else if (poisoned.has(key)) heldBack.push(message.position);
    else sendable.push(message);
  }
  return { sendable, heldBack };
}
