import { errorText } from '../core/error-text';
import type { RelayLogger } from '../core/outbox-relay';

/*
 * What the library asks the database while the app starts (the table probe, the WAL slot's set-up,
 * the check for a slot left behind) is asked once; a server restarting at that moment failed the
 * query, Nest's init with it, and the process exited — while the same restart a second later is
 * ridden out by every running path. The start now waits for the server as those paths do, for a
 * bounded time: an app started beside its database (a deploy, a failover) comes up once the
 * database does, and one whose database never comes back still fails its start, loudly.
 */

// PostgreSQL: admin_shutdown (a fast or smart stop), crash_shutdown (another backend crashed; the
// server reinitialises), cannot_connect_now (starting up, shutting down, or in recovery), and the
// connection exceptions of class 08.
const POSTGRES_RESTARTING = new Set(['57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006']);
// MariaDB/MySQL: the server is shutting down, or the connection went with it.
const MARIADB_RESTARTING = new Set(['ER_SERVER_SHUTDOWN', 'PROTOCOL_CONNECTION_LOST', 'ER_CONNECTION_KILLED']);
// The socket: refused while the server is down, reset or cut while it goes.
const SOCKET_LOST = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE']);
// node-postgres and mysql2 report a socket that ended under a query by message only.
const SOCKET_ENDED = /^Connection terminated( unexpectedly)?$|^Client has encountered a connection error and is not queryable$|connection is in closed state$/;

/** Whether `error` says the database server is going away or not back yet, rather than that the statement or the schema is wrong. */
export function isServerRestarting(error: unknown): boolean {
  // TypeORM wraps the driver's error (`driverError`); others chain it as `cause`; Node's
  // connect to several addresses gives an AggregateError whose `code` is the shared one.
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (POSTGRES_RESTARTING.has(code) || MARIADB_RESTARTING.has(code) || SOCKET_LOST.has(code))) return true;
    if (typeof message === 'string' && SOCKET_ENDED.test(message)) return true;
    current = (current as { driverError?: unknown }).driverError ?? (current as { cause?: unknown }).cause;
  }
  return false;
}

export interface StartRetry {
  logger: Pick<RelayLogger, 'warn' | 'log'>;
  /** How long to wait for the server in all (default 60 s, what a restart or a failover of a managed database takes). */
  waitMs?: number;
  /** The first pause between tries; each one doubles, up to 2 s. */
  firstPauseMs?: number;
}

export const START_WAIT_MS = 60_000;

/** The database was still away when the start stopped waiting for it. */
export class DatabaseUnreachableError extends Error {
  override readonly name = 'DatabaseUnreachableError';
}

/**
 * Runs `step` (a start query, safe to run again) until it succeeds, trying again while the server
 * restarts (`isServerRestarting`) for up to `waitMs`. The last error once the wait
 * is over as a `DatabaseUnreachableError`, any other error as it came: the caller says what that
 * means for the start.
 */
export async function whileServerRestarts<T>(what: string, step: () => Promise<T>, { logger, waitMs = START_WAIT_MS, firstPauseMs = 250 }: StartRetry): Promise<T> {
  const deadline = Date.now() + waitMs;
  let pauseMs = firstPauseMs;
  let tries = 0;
  for (;;) {
    try {
      const result = await step();
      if (tries > 0) logger.log(`Outbox: ${what} succeeded after the database came back (${tries + 1} tries).`);
      return result;
    } catch (error) {
      if (!isServerRestarting(error)) throw error;
      if (Date.now() + pauseMs > deadline) {
        throw new DatabaseUnreachableError(
          `Outbox: ${what} found no database for ${duration(waitMs)} (${errorText(error)}): start the database, or check the host and port of the app's data source.`,
          { cause: error },
        );
      }
      if (tries === 0) logger.warn(`Outbox: ${what} found the database restarting (${errorText(error)}); trying again for up to ${duration(waitMs)}.`);
      tries += 1;
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
      pauseMs = Math.min(pauseMs * 2, 2_000);
    }
  }
}

const duration = (ms: number): string => (ms < 1_000 ? `${ms} ms` : `${Math.round(ms / 1_000)} s`);
