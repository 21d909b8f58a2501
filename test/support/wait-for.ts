import { staysAtMost, waitUntil } from '../../libs/outbox/src/testing/contracts/contract-runner';

/** Polls `probe` until it returns a value other than undefined/false, or fails after `timeoutMs` with `what`. */
export function waitFor<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 15_000): Promise<T> {
  return waitUntil(what, probe, timeoutMs, 25);
}

/**
 * How long a test keeps consuming after the last message it expected: long enough for a copy the
 * relay or the broker sends again (a produce retry, a redelivery after a lost settle) to arrive.
 */
export const LATE_COPY_GRACE_MS = 1_500;

/**
 * Keeps watching `count` (of extra copies, of records) for LATE_COPY_GRACE_MS after the awaited
 * messages arrived and fails as soon as it passes `max`; returns its last value.
 */
export function staysAtMostAfterGrace(what: string, count: () => Promise<number> | number, max: number, graceMs = LATE_COPY_GRACE_MS): Promise<number> {
  return staysAtMost(what, count, max, graceMs, 25);
}

/** Extra copies among `ids`: every arrival of an id after its first. */
export function extraCopies(ids: Iterable<string>): number {
  const all = [...ids];
  return all.length - new Set(all).size;
}
