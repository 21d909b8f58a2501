import { errorText } from '../core/error-text';
import type { RelayLogger } from '../core/outbox-relay';

/*
 * A driver connection is an EventEmitter: an 'error' emitted while no listener is attached is
 * thrown, and ends the host process. Pools leave such moments: pg-pool removes its own listener
 * when it hands a client out and the borrower (TypeORM, the LISTEN listener) attaches one a moment
 * later; a server that terminates connections (a restart: 57P01) in between killed an app. mysql2's
 * pooled connection listens only once, so a second error after the first is thrown too. The guards
 * here attach a listener of their own to every connection a pool opens or hands out, which stays
 * for the connection's life, and give the pool an 'error' listener (pg-pool emits an idle client's
 * error on the pool). What broke the connection is still seen by whoever uses it (a query fails,
 * the borrower's own listener runs): the guard only keeps the process alive and tells the operator.
 */

/** Any emitter of 'error' (a pg Client, a mysql2 connection, a replication service). */
export interface ErrorEmitter {
  on(event: 'error', listener: (error: Error) => void): unknown;
  listeners(event: 'error'): Function[];
}

/** A pool that announces the connections it opens and hands out (pg-pool, mysql2). */
export interface PoolEvents extends ErrorEmitter {
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'connect' | 'acquire' | 'connection', listener: (connection: ErrorEmitter) => void): unknown;
}

const SUMMARY_INTERVAL_MS = 10_000;

// The pools guarded so far: the outbox and the inbox module may share the app's data source, and
// its errors should reach the log once, not once per module.
const guardedPools = new WeakSet<object>();

/**
 * Logs connection errors so that an operator sees them without a line per client: the first one at
 * once, those that follow within the next 10 s as one count (a restart ends every pooled client at
 * the same moment). The connections are replaced by their pools; nothing is lost by not logging each.
 */
export class ConnectionErrorLog {
  private suppressed = 0;
  private lastSuppressed = '';
  private timer: NodeJS.Timeout | undefined;

  /** One listener per log: a connection gets it once however often it is guarded. */
  readonly listener = (error: Error): void => this.report(error);

  constructor(
    private readonly logger: Pick<RelayLogger, 'warn'>,
    private readonly what: string,
    private readonly intervalMs = SUMMARY_INTERVAL_MS,
  ) {}

  report(error: unknown): void {
    if (this.timer) {
      this.suppressed += 1;
      this.lastSuppressed = errorText(error);
      return;
    }
    this.logger.warn(`Outbox: a ${this.what} connection failed (${errorText(error)}); it is dropped and a new one is opened when needed.`);
    this.openWindow();
  }

  private openWindow(): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.suppressed === 0) return;
      this.logger.warn(`Outbox: ${this.suppressed} more ${this.what} connection error(s) in the last ${this.intervalMs / 1000} s (the last: ${this.lastSuppressed}).`);
      this.suppressed = 0;
      this.openWindow();
    }, this.intervalMs);
    // A summary still due must not hold a stopping process open.
    this.timer.unref();
  }
}

/** Attaches the log's listener to a connection unless it already has it (a borrower may have removed all listeners since). */
export function guardConnection(connection: ErrorEmitter, log: ConnectionErrorLog): void {
  if (!connection.listeners('error').includes(log.listener)) connection.on('error', log.listener);
}

/**
 * Guards a node-postgres pool: every client it opens ('connect') or hands out ('acquire', which
 * covers the clients opened before this call), and the pool itself.
 */
export function guardPgPool(pool: PoolEvents, log: ConnectionErrorLog): void {
  if (guardedPools.has(pool)) return;
  guardedPools.add(pool);
  pool.on('error', log.listener);
  const guard = (client: ErrorEmitter) => guardConnection(client, log);
  pool.on('connect', guard);
  pool.on('acquire', guard);
}

/** Guards a mysql2 pool (callback or promise): every connection it opens ('connection') or hands out ('acquire'). */
export function guardMysql2Pool(pool: PoolEvents, log: ConnectionErrorLog): void {
  if (guardedPools.has(pool)) return;
  guardedPools.add(pool);
  const guard = (connection: ErrorEmitter) => guardConnection(connection, log);
  pool.on('connection', guard);
  pool.on('acquire', guard);
}
