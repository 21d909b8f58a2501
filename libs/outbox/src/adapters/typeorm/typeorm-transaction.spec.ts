import type { EntityManager, QueryRunner } from 'typeorm';
import { OutboxWriteError } from '../../core/outbox.errors';
import type { FollowedTransactions } from '../data-layer.port';
import { toSqlTransaction } from '../data-layer-transaction';
import { isEntityManager, typeOrmTransaction } from './typeorm-transaction';

/** What the module's tracker is told, per query runner: written, and the notification sent. */
function follower() {
  const wrote = new Set<object>();
  const notified = new Set<object>();
  const followed: FollowedTransactions = {
    wrote: (owner) => void wrote.add(owner),
    needsNotification: (owner) => !notified.has(owner),
    notified: (owner) => void notified.add(owner),
  };
  return { followed, wrote };
}

const plain = { preparedStatements: false };
const prepared = { preparedStatements: true };

/** An EntityManager on a query runner, recording how each statement ran: `query` (TypeORM's API) or `named` (the driver's client). */
function fakeManager(type: string, { active = true, raw = [] as unknown } = {}) {
  const ran: { via: 'query' | 'named'; sql: string; name?: string }[] = [];
  const logger = { logQuery: () => undefined, logQueryError: () => undefined };
  const client = { query: async (config: { name: string; text: string }) => (ran.push({ via: 'named', sql: config.text, name: config.name }), { rows: [] }) };
  const queryRunner = { isTransactionActive: active, connection: { logger }, connect: async () => client } as unknown as QueryRunner;
  const manager = {
    transaction: async () => undefined,
    queryRunner: active ? queryRunner : undefined,
    connection: { options: { type } },
    query: async (sql: string) => (ran.push({ via: 'query', sql }), raw),
  } as unknown as EntityManager;
  return { manager, queryRunner, ran };
}

describe('typeOrmTransaction', () => {
  it('refuses a manager outside a transaction, saying how to open one', () => {
    const { manager } = fakeManager('postgres', { active: false });
    expect(() => typeOrmTransaction(manager, prepared)).toThrow(OutboxWriteError);
    expect(() => typeOrmTransaction(manager, prepared)).toThrow(/dataSource\.transaction/);
  });

  it('on PostgreSQL runs the writes as named statements on the query runner, queries through TypeORM', async () => {
    const { manager, queryRunner, ran } = fakeManager('postgres');
    const tx = typeOrmTransaction(manager, prepared);
    expect(tx).toMatchObject({ dialect: 'postgres', layer: 'typeorm', owner: queryRunner });
    await tx.execute('INSERT 1', []);
    await tx.query('SELECT 1', []);
    expect(ran).toEqual([{ via: 'named', sql: 'INSERT 1', name: expect.any(String) }, { via: 'query', sql: 'SELECT 1' }]);
  });

  it('runs every statement through TypeORM with preparedStatements: false', async () => {
    const { manager, ran } = fakeManager('postgres');
    await typeOrmTransaction(manager, plain).execute('INSERT 1', []);
    expect(ran).toEqual([{ via: 'query', sql: 'INSERT 1' }]);
  });

  it('on MariaDB resolves a write with the rows it changed', async () => {
    const { manager } = fakeManager('mariadb', { raw: { affectedRows: 2 } });
    const tx = typeOrmTransaction(manager, prepared);
    expect(tx.dialect).toBe('mariadb');
    await expect(tx.execute('INSERT 1', [])).resolves.toBe(2);
  });

  it('asks the followed transactions for the notification, and marks the transaction as having written', async () => {
    const { manager, queryRunner } = fakeManager('postgres');
    const { followed, wrote } = follower();
    const tx = typeOrmTransaction(manager, { ...prepared, followed });
    expect(tx.notifications?.needed()).toBe(true);
    tx.notifications?.sent();
    expect(typeOrmTransaction(manager, { ...prepared, followed }).notifications?.needed()).toBe(false);
    await tx.execute('INSERT 1', []);
    expect([...wrote]).toEqual([queryRunner]);
  });

  it('without followed transactions leaves the notification to every INSERT', () => {
    const { manager } = fakeManager('postgres');
    expect(typeOrmTransaction(manager, prepared).notifications).toBeUndefined();
  });

  it('is one of the data layers: toSqlTransaction takes a manager by its shape, with the options given', async () => {
    const { manager, ran } = fakeManager('postgres');
    expect(isEntityManager(manager)).toBe(true);
    expect(isEntityManager({ query: async () => [] })).toBe(false);
    await toSqlTransaction(manager).execute('INSERT 1', []);
    await toSqlTransaction(manager, prepared).execute('INSERT 2', []);
    expect(ran.map(({ via }) => via)).toEqual(['query', 'named']);
  });
});
