import { OutboxConfigurationError } from '../core/outbox.errors';
import { SqlInbox } from './sql-inbox';
import type { SqlDialectName, SqlTransaction } from '../core/sql-transaction.port';

/** Answers the mark with `rows`; the SQL itself runs against real PostgreSQL in test/data-layers. */
function transaction(dialect: SqlDialectName, rows: Record<string, unknown>[], affected?: number): SqlTransaction & { sql: string[] } {
  const sql: string[] = [];
  return {
    dialect,
    layer: 'test',
    sql,
    query: async (text) => {
      sql.push(text);
      return rows;
    },
    execute: async (text) => {
      sql.push(text);
      return affected;
    },
  };
}

describe('SqlInbox', () => {
  const envelope = { id: '0190-a', type: 'orders.order-paid' };

  it('runs the work when the mark comes back, and not when it does not', async () => {
    const work = jest.fn(() => 'done');
    expect(await new SqlInbox().process(transaction('postgres', [{ inserted: 1 }]), envelope, 'shipping', work)).toEqual({ duplicate: false, result: 'done' });
    expect(await new SqlInbox().process(transaction('postgres', []), envelope, 'shipping', work)).toEqual({ duplicate: true });
    expect(work).toHaveBeenCalledTimes(1);
  });

  it('marks with the dialect’s statement on its table', async () => {
    const tx = transaction('sqlite', [{ inserted: 1 }]);
    await new SqlInbox('my_inbox').process(tx, '0190-b', 'shipping', () => undefined);
    expect(tx.sql).toEqual([expect.stringMatching(/^INSERT OR IGNORE INTO "my_inbox"/)]);
  });

  it('on MariaDB, runs the work when INSERT IGNORE changed a row, and not when it changed none', async () => {
    const work = jest.fn(() => 'done');
    const first = transaction('mariadb', [], 1);
    expect(await new SqlInbox('my_inbox').process(first, envelope, 'shipping', work)).toEqual({ duplicate: false, result: 'done' });
    expect(first.sql).toEqual([expect.stringMatching(/^INSERT IGNORE INTO `my_inbox`/)]);
    expect(await new SqlInbox().process(transaction('mariadb', [], 0), envelope, 'shipping', work)).toEqual({ duplicate: true });
    expect(work).toHaveBeenCalledTimes(1);
  });

  it('refuses on MariaDB a transaction whose execute() does not tell the affected rows, and runs no work', async () => {
    const work = jest.fn();
    await expect(new SqlInbox().process(transaction('mariadb', []), envelope, 'shipping', work)).rejects.toThrow(/cannot tell on MariaDB\/MySQL.*affected-row count/s);
    expect(work).not.toHaveBeenCalled();
  });

  it('refuses, before any SQL, a bad table name, consumer or message id', async () => {
    expect(() => new SqlInbox('inbox; DROP TABLE x')).toThrow(OutboxConfigurationError);
    const tx = transaction('postgres', [{ inserted: 1 }]);
    await expect(new SqlInbox().process(tx, envelope, '', () => undefined)).rejects.toThrow(/consumer name/);
    await expect(new SqlInbox().process(tx, { id: '' }, 'shipping', () => undefined)).rejects.toThrow(/"shipping" was given no message id/);
    expect(tx.sql).toEqual([]);
  });
});
