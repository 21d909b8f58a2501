import type { DataSource } from 'typeorm';

/** What the clock needs of a pg or mysql2 pool. */
interface PoolEvents {
  on(event: string, listener: (...args: never[]) => void): unknown;
}

/**
 * Remembers when the app's pool last lost a connection to an error. TypeORM answers a query on a
 * transaction whose connection the server ended (a restart) with "Query runner already released",
 * the same error a query after the transaction's end gets from a bug. Only a recent connection loss
 * tells the two apart: then the request failed because the database went away, and may be retried.
 */
export class ConnectionLossClock {
  private lastLossAt = Number.NEGATIVE_INFINITY;

  static watching(dataSource: DataSource): ConnectionLossClock {
    const clock = new ConnectionLossClock();
    const driver = dataSource.driver as unknown as { master?: PoolEvents; pool?: PoolEvents };
    const lost = () => (clock.lastLossAt = Date.now());
    // pg-pool: TypeORM hands a connection back with the error that ended it.
    driver.master?.on('release', (error: Error | undefined) => void (error && lost()));
    // mysql2: a pooled connection emits 'error' when the server ends it.
    driver.pool?.on('connection', (connection: PoolEvents) => connection.on('error', lost));
    return clock;
  }

  lostWithin(ms: number): boolean {
    return Date.now() - this.lastLossAt <= ms;
  }
}
