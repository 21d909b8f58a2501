/**
 * Describe mode: while `nest-outbox asyncapi` loads an app's module to read what it publishes, the
 * outbox starts no relay, stream or cleanup. A process-wide flag under a registered symbol, so that
 * it reaches the app's copy of the library even when the command runs another copy.
 */
const DESCRIBE_ONLY = Symbol.for('@nest-outbox/outbox:describe-only');

type Flagged = typeof globalThis & { [DESCRIBE_ONLY]?: boolean };

/** True while `describing()` runs: the module resolves its options and starts nothing. */
export function isDescribing(): boolean {
  return (globalThis as Flagged)[DESCRIBE_ONLY] === true;
}

/** Runs `load` (which builds the app's module) in describe mode. */
export async function describing<T>(load: () => Promise<T>): Promise<T> {
  (globalThis as Flagged)[DESCRIBE_ONLY] = true;
  try {
    return await load();
  } finally {
    delete (globalThis as Flagged)[DESCRIBE_ONLY];
  }
}
