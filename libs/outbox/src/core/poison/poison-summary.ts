import type { PoisonCount } from './poison.port';

/** One consumer's poison records, as `status` and the health indicator show them. */
export interface PoisonConsumerSummary {
  consumer: string;
  /** Records still retried by the broker. */
  failing: number;
  /** Records acknowledged and kept for an operator (`set-aside` and `replay-requested`). */
  waiting: number;
  /** Of those waiting, the ones an operator asked to replay. */
  replayRequested: number;
  /** Age in milliseconds of the oldest waiting record, from its first failure; `null` when none waits. */
  oldestWaitingAgeMs: number | null;
}

/** The poison table at a glance: what waits set aside, over all consumers and per consumer (sorted by name). */
export interface PoisonSummary {
  waiting: number;
  oldestWaitingAgeMs: number | null;
  consumers: PoisonConsumerSummary[];
}

/** Folds the store's counts into a summary; `now` in epoch milliseconds. */
export function summarizePoison(counts: PoisonCount[], now: number): PoisonSummary {
  const byConsumer = new Map<string, PoisonConsumerSummary>();
  for (const row of counts) {
    const entry = byConsumer.get(row.consumer) ?? { consumer: row.consumer, failing: 0, waiting: 0, replayRequested: 0, oldestWaitingAgeMs: null };
    byConsumer.set(row.consumer, entry);
    if (row.state === 'failing') {
      entry.failing += row.count;
      continue;
    }
    entry.waiting += row.count;
    if (row.state === 'replay-requested') entry.replayRequested += row.count;
    const age = Math.max(0, now - Date.parse(row.oldestFailedAt));
    if (!Number.isNaN(age)) entry.oldestWaitingAgeMs = Math.max(entry.oldestWaitingAgeMs ?? 0, age);
  }
  const consumers = [...byConsumer.values()].sort((a, b) => a.consumer.localeCompare(b.consumer));
  const ages = consumers.flatMap((c) => (c.oldestWaitingAgeMs === null ? [] : [c.oldestWaitingAgeMs]));
  return { waiting: consumers.reduce((sum, c) => sum + c.waiting, 0), oldestWaitingAgeMs: ages.length ? Math.max(...ages) : null, consumers };
}
