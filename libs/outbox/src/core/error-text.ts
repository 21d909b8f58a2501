import { types } from 'node:util';
import { clipErrorText } from './message-limits';

/** The text recorded for an error: its message, cut to ERROR_LIMITS.textChars so that huge errors do not bloat rows. */
export function errorText(error: unknown): string {
  return clipErrorText(fullErrorText(error));
}

function fullErrorText(error: unknown): string {
  // isNativeError also recognizes errors made in another realm (vm contexts, test sandboxes).
  if (error instanceof Error || types.isNativeError(error)) return (error as Error).message || (error as Error).name;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/** The stack of an error, for a logger that prints it; `undefined` for anything thrown that is not an Error. */
export function stackOf(error: unknown): string | undefined {
  return error instanceof Error ? error.stack : undefined;
}
