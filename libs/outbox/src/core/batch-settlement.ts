import type { ClaimedMessage } from './outbox-message';
import type { FailedDelivery, OutboxStore } from './outbox-store.port';
import type { RetryPolicy } from './retry-policy';
import type { MessageOutcome, SettledBatch } from './observe/relay-observer';
import { NOT_SENT, type SendResult } from './batch-runs';
import { errorText, stackOf } from './error-text';
import { failedRowsTakenOver, publishedRowsTakenOver } from './outbox.messages';

/** What became of each row of a claimed batch, sorted the way the store records it. */
export interface SortedOutcomes {
  published: string[];
  failed: FailedDelivery[];
  /** Rows not attempted (behind a failed or undecodable row of their aggregate): back to the store, uncharged. */
  givenBack: string[];
  /** Rows with an outcome to report, and how long their publish took. */
  attempted: Array<{ message: ClaimedMessage; durationMs: number }>;
}

/** A batch after its publish: the undecodable rows, the rows held back behind them, and what became of those sent. */
export interface PublishedBatch {
  undecodable: ReadonlyMap<string, string>;
  heldBack: string[];
  sendable: ClaimedMessage[];
  sent: { results: SendResult[]; durations: number[] };
}

/** Sorts the rows of a batch, in batch order, into published, failed (with their retry time or dead) and given back. */
export function sortOutcomes(messages: ClaimedMessage[], batch: PublishedBatch, retryPolicy: Pick<RetryPolicy, 'delayAfter'>): SortedOutcomes {
  const { undecodable, heldBack, sendable, sent } = batch;
  const outcomeOf = new Map<string, { result: SendResult; durationMs: number }>(sendable.map((message, index) => [message.position, { result: sent.results[index], durationMs: sent.durations[index] }]));
  const published: string[] = [];
  const failed: FailedDelivery[] = [];
  const givenBack: string[] = [...heldBack];
  const attempted: Array<{ message: ClaimedMessage; durationMs: number }> = [];
  messages.forEach((message) => {
    const poison = undecodable.get(message.position);
    if (poison !== undefined) {
      attempted.push({ message, durationMs: 0 });
      return failed.push({ position: message.position, error: poison, retryInMs: null });
    }
    const outcome = outcomeOf.get(message.position);
    if (!outcome) return;
    const { result, durationMs } = outcome;
    if (result === NOT_SENT) return givenBack.push(message.position);
    attempted.push({ message, durationMs });
    if (result === undefined) published.push(message.position);
    else failed.push({ position: message.position, error: result.text, retryInMs: result.final ? null : retryPolicy.delayAfter(message.attempt) });
  });
  return { published, failed, givenBack, attempted };
}

/** The outcome of each attempted row, for the observers; rows given back were not attempted and have none. */
export function reportedOutcomes(attempted: SortedOutcomes['attempted'], failed: FailedDelivery[]): MessageOutcome[] {
  const failures = new Map(failed.map((failure) => [failure.position, failure]));
  return attempted.map(({ message, durationMs }) => {
    const failure = failures.get(message.position);
    return { message, error: failure?.error, retryInMs: failure?.retryInMs, durationMs };
  });
}

/** Where a batch is settled: its store, and the relay that holds the lease, named in the warnings. */
export interface SettleTarget {
  store: OutboxStore;
  owner: string;
  logger: { warn(message: string): void; error(message: string, stack?: string): void };
}

/**
 * Records a batch's outcome under its claim token. Never throws: a store that cannot record it is
 * reported in `settleError`, and the leases expire so the rows are claimed again.
 */
export async function recordOutcomes(
  { store, owner, logger }: SettleTarget,
  token: string,
  published: string[],
  failed: FailedDelivery[],
  givenBack: string[],
): Promise<Omit<SettledBatch, 'relayId' | 'outcomes'>> {
  const leaseLost = { published: 0, failed: 0 };
  try {
    // Given back first, so that the next claim finds them free; a lost lease here changes nothing.
    if (givenBack.length > 0) await store.giveBack(token, givenBack);
    if (published.length > 0) {
      const marked = await store.markPublished(token, published);
      leaseLost.published = published.length - marked;
      if (marked < published.length) logger.warn(publishedRowsTakenOver(owner, published.length - marked));
    }
    if (failed.length > 0) {
      const recorded = await store.markFailed(token, failed);
      leaseLost.failed = failed.length - recorded;
      // The lease expired meanwhile and another relay holds these rows: nothing was scheduled here.
      if (recorded < failed.length) logger.warn(failedRowsTakenOver(owner, failed.length - recorded));
    }
    return { leaseLost };
  } catch (error) {
    // The leases will expire and the rows be claimed again: a duplicate, never a loss.
    logger.error(`Outbox relay ${owner}: could not record the batch outcome: ${errorText(error)}`, stackOf(error));
    return { leaseLost, settleError: errorText(error) };
  }
}
