/**
 * When a pending row became due: the time its lag counts from. A row is due at its creation, or,
 * while it has not failed yet (attempts 0, or 1 during its first attempt), at `next_attempt_at`:
 * the end of its delay, or its requeue. So a message delayed by an hour, or a dead one requeued a
 * day after it was written, does not show as an hour or a day late. A row that has failed counts
 * from its creation: its `next_attempt_at` is then the next retry, and the lag should grow through
 * an outage.
 */
export function dueSince(now: string): string {
  const firstAttempt = `(attempts = 0 OR (attempts = 1 AND lease_expires_at IS NOT NULL AND lease_expires_at > ${now}))`;
  return `CASE WHEN next_attempt_at IS NOT NULL AND ${firstAttempt} THEN next_attempt_at ELSE created_at END`;
}

/** The SET of a requeue: pending with fresh attempts, due from `now` (see dueSince). */
export function requeued(now: string): string {
  return `status = 'pending', attempts = 0, next_attempt_at = ${now}, dead_at = NULL`;
}
