import { types } from 'node:util';
import { OutboxNonRetryableError } from './outbox.errors';

/** One failed publish: the text recorded on the row, and whether another attempt could help. */
export interface PublishFailure {
  text: string;
  /** `true`: the row goes dead now, whatever attempts are left. */
  final: boolean;
}

/** Decides, per error, whether a failed publish is retried. See the `retryIf` option. */
export type RetryIf = (error: unknown) => boolean;

/**
 * A `OutboxNonRetryableError` (or an error caused by one) is final. Other errors are retried,
 * unless `retryIf` says no; a `retryIf` that throws counts as "retry", so a bug in it never kills rows.
 */
export function classifyFailure(error: unknown, text: string, retryIf?: RetryIf): PublishFailure {
  if (isNonRetryable(error)) return { text, final: true };
  if (!retryIf) return { text, final: false };
  try {
    return { text, final: retryIf(error) === false };
  } catch {
    return { text, final: false };
  }
}

function isNonRetryable(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    // By name as well: the class may come from another copy of the library or another realm.
    if (current instanceof OutboxNonRetryableError || ((types.isNativeError(current) || current instanceof Error) && (current as Error).name === 'OutboxNonRetryableError')) {
      return true;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
