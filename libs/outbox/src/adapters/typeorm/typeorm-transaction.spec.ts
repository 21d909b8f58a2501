import type { EntityManager, QueryRunner } from 'typeorm';
import { OutboxWriteError } from '../../core/outbox.errors';
import { OutboxTransactionTracker } from '../../typeorm/outbox-transaction.tracker';
import { typeOrmTransaction } from './typeorm-transaction';

/** An EntityManager on a query runner, recording how each statement ran: `query` (TypeORM's API) or `named` (the driver's client). */
function fakeManager(type: string, { active = true, raw = [] as unknown } = {}) {
  const ran: { via: 'query' | 'named'; sql: string; name?: string }[] = [];
  const logger = { logQuery: () => undefined, logQueryError: () => undefined };
  const client = { query: async (config: { name: string; text: string }) => (ran.push({ via: 'named', sql: config.text, name: config.name }), { rows: [] }) };
  const queryRunner = { isTransactionActive: active, connection: { logger }, connect: async () => client } as unknown as QueryRunner;
  const manager = {
    queryRunner: active ? queryRunner : undefined,
    connection: { options: { type } },
    query: async (sql: string) => (ran.push({ via: 'query', sql }), raw),
  } as unknown as EntityManager;
  return { manager, queryRunner, ran };
}

describe('typeOrmTransaction', () => {
  it('refuses a manager outside a transaction, saying how to open one', () => {
    const { manager } = fakeManager('postgres', { active: false });
    expect(() => typeOrmTransaction(manager, { tracker: new OutboxTransactionTracker() })).toThrow(OutboxWriteError);
    expect(() => typeOrmTransaction(manager, { tracker: new OutboxTransactionTracker() })).toThrow(/dataSource\.transaction/);
  });

  it('on PostgreSQL runs the writes as named statements on the query runner, queries through TypeORM', async () => {
    const { manager, queryRunner, ran } = fakeManager('postgres');
    const tx = typeOrmTransaction(manager, { tracker: new OutboxTransactionTracker() });
    expect(tx).toMatchObject({ dialect: 'postgres', layer: 'typeorm', owner: queryRunner });
    await tx.execute('INSERT 1', []);
    await tx.query('SELECT 1', []);
    expect(ran).toEqual([{ via: 'named', sql: 'INSERT 1', name: expect.any(String) }, { via: 'query', sql: 'SELECT 1' }]);
  });

  it('runs every statement through TypeORM with preparedStatements: false', async () => {
    const { manager, ran } = fakeManager('postgres');
    await typeOrmTransaction(manager, { tracker: new OutboxTransactionTracker(), preparedStatements: false }).execute('INSERT 1', []);
    expect(ran).toEqual([{ via: 'query', sql: 'INSERT 1' }]);
  });

  it('on MariaDB resolves a write with the rows it changed', async () => {
    const { manager } = fakeManager('mariadb', { raw: { affectedRows: 2 } });
    const tx = typeOrmTransaction(manager, { tracker: new OutboxTransactionTracker() });
    expect(tx.dialect).toBe('mariadb');
    await expect(tx.execute('INSERT 1', [])).resolves.toBe(2);
  });

  it('asks the tracker for the notification once per transaction, and marks the transaction as having written', async () => {
    const { manager, queryRunner } = fakeManager('postgres');
    const tracker = new OutboxTransactionTracker();
    tracker.started(queryRunner);
    const tx = typeOrmTransaction(manager, { tracker });
    expect(tx.notifications?.needed()).toBe(true);
    tx.notifications?.sent();
    expect(typeOrmTransaction(manager, { tracker }).notifications?.needed()).toBe(false);
    await tx.execute('INSERT 1', []);
    expect(tracker.committed(Object.assign(queryRunner, { isTransactionActive: false }))).toBe(true);
  });
});
