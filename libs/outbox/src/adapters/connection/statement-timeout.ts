/**
 * A bound on each statement of a pool the library opens. A database that accepts connections and
 * then stops answering (a hung server, a network path that drops packets) would otherwise keep a
 * statement waiting until TCP gives up, minutes or never; with the bound it fails after `ms`, and
 * the connection it ran on is destroyed, never handed out again with a statement still pending.
 */
export interface StatementTimeout {
  ms: number;
  /** The error the caller sees, naming what the pool serves and the option that set `ms`. */
  error(ms: number): string;
}

/** The drivers' own timeout errors: node-postgres' `query_timeout`, mysql2's per-query `timeout`. */
export function isStatementTimeout(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return error.message === 'Query read timeout' || (error as { code?: unknown }).code === 'PROTOCOL_SEQUENCE_TIMEOUT';
}

/** A statement the database did not answer within the bound. */
export class StatementTimeoutError extends Error {
  override readonly name = 'StatementTimeoutError';
}

/** The bound's own error for a driver's timeout; any other error as it was. */
export function nameTimeout(timeout: StatementTimeout | undefined, error: unknown): unknown {
  return timeout && isStatementTimeout(error) ? new StatementTimeoutError(timeout.error(timeout.ms), { cause: error }) : error;
}

/** Said to ROLLBACK after a statement timed out: it is not sent (it would wait behind the one that hangs); the connection is destroyed instead. */
export const NOT_SENT_AFTER_TIMEOUT = 'not sent: an earlier statement of this transaction timed out, its connection is destroyed';
