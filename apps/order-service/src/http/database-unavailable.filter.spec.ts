import { EventEmitter } from 'node:events';
import type { DataSource } from 'typeorm';
import { ConnectionLossClock } from './connection-loss.clock';
import { isDatabaseUnavailable } from './database-unavailable.filter';

/** TypeORM's error for a query on a released query runner (the class is not needed: the filter reads its name). */
function releasedRunner(): Error {
  return Object.assign(new Error('Query runner already released. Cannot run queries anymore.'), { name: 'QueryRunnerAlreadyReleasedError' });
}

describe('isDatabaseUnavailable: the error shapes a PostgreSQL restart produces', () => {
  it.each([
    ['a session the server terminated', Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })],
    ['a server starting up', Object.assign(new Error('the database system is starting up'), { code: '57P03' })],
    ['a refused connect', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['a socket that closed mid-query', new Error('Connection terminated unexpectedly')],
    ['a client whose connection broke', Object.assign(new Error('Client has encountered a connection error and is not queryable'), { name: 'QueryFailedError' })],
    ['a MariaDB connection the server killed', new Error("Can't add new command when connection is in closed state")],
  ])('%s is unavailability', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it('a released query runner is unavailability only right after the pool lost a connection; otherwise a bug', () => {
    const master = new EventEmitter();
    const clock = ConnectionLossClock.watching({ driver: { master } } as unknown as DataSource);
    expect(isDatabaseUnavailable(releasedRunner(), clock)).toBe(false);
    // TypeORM hands a connection back without an error at the end of every transaction: no loss.
    master.emit('release', undefined, {});
    expect(isDatabaseUnavailable(releasedRunner(), clock)).toBe(false);
    master.emit('release', new Error('terminating connection due to administrator command'), {});
    expect(isDatabaseUnavailable(releasedRunner(), clock)).toBe(true);
    expect(isDatabaseUnavailable(releasedRunner())).toBe(false);
  });

  it('an error of the request itself stays a 500', () => {
    expect(isDatabaseUnavailable(Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' }))).toBe(false);
  });
});
