import { OutboxConfigurationError } from '../core/outbox.errors';
import { SqlInbox } from './sql-inbox';
import type { SqlDialectName, SqlTransaction } from './sql-transaction.port';

/** Answers the mark with `rows`; the SQL itself runs against real PostgreSQL in test/data-layers. */
function transaction(dialect: SqlDialectName, rows: Record<string, unknown>[]): SqlTransaction & { sql: string[] } {
  const sql: string[] = [];
  return {
    dialect,
    layer: 'test',
    sql,
    query: async (text) => {
      sql.push(text);
      return rows;
    },
    execute: async () => undefined,
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

  it('refuses, before any SQL, a bad table name, consumer or message id, and MariaDB', async () => {
    expect(() => new SqlInbox('inbox; DROP TABLE x')).toThrow(OutboxConfigurationError);
    const tx = transaction('postgres', [{ inserted: 1 }]);
    await expect(new SqlInbox().process(tx, envelope, '', () => undefined)).rejects.toThrow(/consumer name/);
    await expect(new SqlInbox().process(tx, { id: '' }, 'shipping', () => undefined)).rejects.toThrow(/"shipping" was given no message id/);
    await expect(new SqlInbox().process(transaction('mariadb', []), envelope, 'shipping', () => undefined)).rejects.toThrow(/MariaDB\/MySQL yet.*OutboxInbox\.process/);
    expect(tx.sql).toEqual([]);
  });
});
