import { EventEmitter } from 'node:events';
import { ConnectionErrorLog, guardConnection, guardMysql2Pool, guardPgPool } from './connection-error.guard';

function recordingLogger(): { warn: jest.Mock<void, [string]> } {
  return { warn: jest.fn<void, [string]>() };
}

describe('connection-error guards', () => {
  afterEach(() => jest.useRealTimers());

  it('an error on a client that a pg pool opened or handed out is logged, not thrown, even after its borrower removed every listener', () => {
    const logger = recordingLogger();
    const pool = new EventEmitter();
    guardPgPool(pool, new ConnectionErrorLog(logger, 'PostgreSQL'));
    const client = new EventEmitter();
    pool.emit('connect', client);
    pool.emit('acquire', client);
    expect(client.listenerCount('error')).toBe(1);
    expect(() => client.emit('error', new Error('terminating connection due to administrator command'))).not.toThrow();

    client.removeAllListeners();
    pool.emit('acquire', client);
    expect(() => client.emit('error', new Error('again'))).not.toThrow();
    // The pool's own 'error' (an idle client's) is handled too.
    expect(() => pool.emit('error', new Error('idle client'))).not.toThrow();
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn.mock.calls[0][0]).toContain('terminating connection due to administrator command');
  });

  it('guards a client that a pool opened before the guard once it is handed out again', () => {
    const pool = new EventEmitter();
    const client = new EventEmitter();
    guardPgPool(pool, new ConnectionErrorLog(recordingLogger(), 'PostgreSQL'));
    pool.emit('acquire', client);
    expect(() => client.emit('error', new Error('x'))).not.toThrow();
  });

  it('a mysql2 pool connection that errs twice (it listens once itself) does not end the process', () => {
    const pool = new EventEmitter();
    guardMysql2Pool(pool, new ConnectionErrorLog(recordingLogger(), 'MariaDB'));
    const connection = new EventEmitter();
    connection.once('error', () => undefined);
    pool.emit('connection', connection);
    connection.emit('error', new Error('PROTOCOL_CONNECTION_LOST'));
    expect(() => connection.emit('error', new Error("Can't write in closed state"))).not.toThrow();
  });

  it('guarding a pool twice (the outbox and the inbox module on one data source) attaches one listener', () => {
    const log = new ConnectionErrorLog(recordingLogger(), 'PostgreSQL');
    const pool = new EventEmitter();
    guardPgPool(pool, log);
    guardPgPool(pool, new ConnectionErrorLog(recordingLogger(), 'PostgreSQL'));
    const client = new EventEmitter();
    guardConnection(client, log);
    pool.emit('connect', client);
    pool.emit('acquire', client);
    expect([pool.listenerCount('acquire'), client.listenerCount('error')]).toEqual([1, 1]);
  });

  it('a storm of errors is one line at once and one count per 10 s, not a line per client', () => {
    jest.useFakeTimers();
    const logger = recordingLogger();
    const log = new ConnectionErrorLog(logger, 'PostgreSQL');
    for (let i = 0; i < 50; i++) log.report(new Error(`client ${i}`));
    expect(logger.warn).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(10_000);
    expect(logger.warn).toHaveBeenCalledTimes(2);
    expect(logger.warn.mock.calls[1][0]).toMatch(/^Outbox: 49 more PostgreSQL connection error\(s\) in the last 10 s \(the last: client 49\)/);
    // A quiet window ends the summaries; the next error is logged at once again.
    jest.advanceTimersByTime(10_000);
    log.report(new Error('later'));
    expect(logger.warn).toHaveBeenCalledTimes(3);
    expect(logger.warn.mock.calls[2][0]).toContain('later');
  });
});
