import { Catch, HttpException, HttpStatus, type ArgumentsHost } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import type { Response } from 'express';
import type { ConnectionLossClock } from './connection-loss.clock';

/** Error codes and texts that mean "the database cannot be reached right now", not "the request is wrong". */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND',
  // PostgreSQL: connection exceptions (class 08), shutdown and restarts (57P01–57P03)
  '08000', '08001', '08003', '08004', '08006', '57P01', '57P02', '57P03',
  // MariaDB/MySQL
  'PROTOCOL_CONNECTION_LOST', 'ER_CON_COUNT_ERROR', 'ER_SERVER_SHUTDOWN',
  // SQLite, when another process holds the file
  'SQLITE_BUSY',
]);
const UNAVAILABLE_TEXTS = /Connection terminated|connection timeout|timeout exceeded when trying to connect|not currently accepting connections|Connection lost|pool is closed|encountered a connection error and is not queryable|connection is in closed state/i;
/** TypeORM's error for a query on a transaction whose connection is gone: unavailability only right after a connection loss. */
const RELEASED_RUNNER = 'QueryRunnerAlreadyReleasedError';
const CONNECTION_LOSS_WINDOW_MS = 30_000;

/**
 * Answers 503 with Retry-After while the database is away, so that clients and load balancers
 * retry instead of reporting a server bug; every other error keeps Nest's handling.
 */
@Catch()
export class DatabaseUnavailableFilter extends BaseExceptionFilter {
  constructor(
    applicationRef?: ConstructorParameters<typeof BaseExceptionFilter>[0],
    private readonly connectionLoss?: ConnectionLossClock,
  ) {
    super(applicationRef);
  }

  override catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http' || exception instanceof HttpException || !isDatabaseUnavailable(exception, this.connectionLoss)) {
      return super.catch(exception, host);
    }
    const response = host.switchToHttp().getResponse<Response>();
    response
      .status(HttpStatus.SERVICE_UNAVAILABLE)
      .setHeader('retry-after', '5')
      .json({ statusCode: 503, error: 'Service Unavailable', message: 'The database is unavailable; nothing was saved. Retry shortly.' });
  }
}

export function isDatabaseUnavailable(error: unknown, connectionLoss?: ConnectionLossClock): boolean {
  for (let cause = error, depth = 0; cause && typeof cause === 'object' && depth < 4; depth++) {
    const { code, message, driverError, name } = cause as { code?: unknown; message?: unknown; driverError?: unknown; name?: unknown };
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
    if (name === RELEASED_RUNNER) return connectionLoss?.lostWithin(CONNECTION_LOSS_WINDOW_MS) ?? false;
    if (typeof message === 'string' && UNAVAILABLE_TEXTS.test(message)) return true;
    cause = driverError ?? (cause as { cause?: unknown }).cause;
  }
  return false;
}
