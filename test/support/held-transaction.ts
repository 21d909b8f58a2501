/** A transaction that has written and waits, open, until `release()`; `done` settles when it has ended. */
export interface HeldTransaction {
  release(): void;
  done: Promise<unknown>;
}

/**
 * Opens a transaction with `open` (a data layer's own transaction call), runs `write` in it and
 * keeps it open, holding what `write` locked, until `release()`. Resolves once `write` is done, or
 * as soon as the transaction fails, so a failing write ends the test instead of leaving it waiting.
 */
export async function holdTransaction<T>(open: (work: (tx: T) => Promise<void>) => Promise<unknown>, write: (tx: T) => Promise<unknown>): Promise<HeldTransaction> {
  let release!: () => void;
  const mayCommit = new Promise<void>((resolve) => (release = resolve));
  let wrote!: () => void;
  const hasWritten = new Promise<void>((resolve) => (wrote = resolve));
  const done = open(async (tx) => {
    await write(tx);
    wrote();
    await mayCommit;
  });
  await Promise.race([hasWritten, done]);
  return { release, done };
}
