/**
 * Waits for `work` at most `ms`: 'done' when it settled (resolved or rejected: a failed shutdown step
 * is logged by whoever owns it), 'timeout' otherwise. The work itself is not cancelled; the caller
 * moves on without it, which is what a shutdown step that must not hold the process up wants.
 */
export async function settleWithin(work: Promise<unknown>, ms: number): Promise<'done' | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
  try {
    return await Promise.race([work.then(() => 'done' as const, () => 'done' as const), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
