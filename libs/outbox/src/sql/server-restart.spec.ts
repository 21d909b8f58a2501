import { DatabaseUnreachableError, isServerRestarting, whileServerRestarts } from './server-restart';

const withCode = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

describe('isServerRestarting', () => {
  it.each([
    ['PostgreSQL stopping (57P01)', withCode('57P01', 'terminating connection due to administrator command')],
    ['PostgreSQL after a crash (57P02)', withCode('57P02')],
    ['PostgreSQL starting up (57P03)', withCode('57P03', 'the database system is starting up')],
    ['a refused connection', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['a reset connection', withCode('ECONNRESET')],
    ['node-postgres: the socket ended under a query', new Error('Connection terminated unexpectedly')],
    ['MariaDB shutting down', withCode('ER_SERVER_SHUTDOWN')],
    ['mysql2: the connection went', withCode('PROTOCOL_CONNECTION_LOST')],
    ['mysql2: a command on a closed connection', new Error("Can't add new command when connection is in closed state")],
    ['PostgreSQL: a connection failure (08006)', withCode('08006')],
    ['TypeORM wrapping the driver', Object.assign(new Error('query failed'), { driverError: withCode('57P01') })],
    ['a cause chain', new Error('probe failed', { cause: withCode('ECONNREFUSED') })],
  ])('%s: yes', (_, error) => {
    expect(isServerRestarting(error)).toBe(true);
  });

  it.each([
    ['a missing table (42P01)', withCode('42P01', 'relation "outbox_messages" does not exist')],
    ['a permission error (42501)', withCode('42501')],
    ['a bad password (28P01)', withCode('28P01')],
    ['an unknown host', withCode('ENOTFOUND')],
    ['no error object', 'terminating connection'],
    ['nothing', undefined],
  ])('%s: no', (_, error) => {
    expect(isServerRestarting(error)).toBe(false);
  });
});

describe('whileServerRestarts', () => {
  const logger = () => ({ log: jest.fn<void, [string]>(), warn: jest.fn<void, [string]>() });

  it('tries again while the server restarts, says so once, and returns what the step gave', async () => {
    const log = logger();
    const errors = [withCode('57P01', 'terminating connection due to administrator command'), withCode('ECONNREFUSED'), withCode('57P03')];
    const step = jest.fn(async () => {
      const error = errors.shift();
      if (error) throw error;
      return 'read';
    });
    await expect(whileServerRestarts('reading the outbox table', step, { logger: log, firstPauseMs: 1 })).resolves.toBe('read');
    expect(step).toHaveBeenCalledTimes(4);
    expect(log.warn).toHaveBeenCalledTimes(1);
    expect(log.warn.mock.calls[0][0]).toContain('reading the outbox table found the database restarting (terminating connection due to administrator command)');
    expect(log.log.mock.calls[0][0]).toContain('4 tries');
  });

  it('throws any other error at once', async () => {
    const log = logger();
    const missing = withCode('42P01', 'relation "outbox_messages" does not exist');
    const step = jest.fn(async () => {
      throw missing;
    });
    await expect(whileServerRestarts('reading the outbox table', step, { logger: log, firstPauseMs: 1 })).rejects.toBe(missing);
    expect(step).toHaveBeenCalledTimes(1);
    expect(log.warn).not.toHaveBeenCalled();
  });

  it('gives up once the wait is over, naming the step and the last error', async () => {
    const log = logger();
    const refused = withCode('ECONNREFUSED');
    const step = jest.fn(async () => {
      throw refused;
    });
    const failure = await whileServerRestarts('reading the outbox table', step, { logger: log, waitMs: 200, firstPauseMs: 20 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(DatabaseUnreachableError);
    expect((failure as Error).message).toBe(
      "Outbox: reading the outbox table found no database for 200 ms (failed): start the database, or check the host and port of the app's data source.",
    );
    expect((failure as Error).cause).toBe(refused);
    expect(step.mock.calls.length).toBeGreaterThan(1);
  });
});
