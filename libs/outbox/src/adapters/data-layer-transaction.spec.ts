import { OutboxConfigurationError, OutboxWriteError } from '../core/outbox.errors';
import { toSqlTransaction } from './data-layer-transaction';
import { loadDataLayer } from './load-data-layer';

// Stand-ins with the shapes of each layer's objects; the real objects are used in test/data-layers.
const pgClient = (status: string | null) => ({ query: async () => ({ rows: [] }), getTransactionStatus: () => status, release: () => undefined });
const prismaTx = { $queryRawUnsafe: async () => [], $executeRawUnsafe: async () => 0, $transaction: async () => undefined, _activeProvider: 'postgresql' };

describe('toSqlTransaction', () => {
  it('takes a node-postgres client in a transaction, and refuses an idle one, an unconnected one and a pool', () => {
    expect(toSqlTransaction(pgClient('T'))).toMatchObject({ dialect: 'postgres', layer: 'pg' });
    expect(() => toSqlTransaction(pgClient('I'))).toThrow(/client \(pg\) that is not inside a transaction.*BEGIN/);
    expect(() => toSqlTransaction(pgClient(null))).toThrow(OutboxWriteError);
    expect(() => toSqlTransaction({ query: async () => ({ rows: [] }), connect: async () => undefined, totalCount: 0 })).toThrow(/a Pool.*pool\.connect\(\)/);
  });

  it('takes a Prisma transaction client by its provider, and refuses the PrismaClient itself', () => {
    expect(toSqlTransaction(prismaTx)).toMatchObject({ dialect: 'postgres', layer: 'prisma' });
    expect(toSqlTransaction({ ...prismaTx, _activeProvider: 'sqlite' })).toMatchObject({ dialect: 'sqlite' });
    expect(() => toSqlTransaction({ ...prismaTx, $connect: async () => undefined })).toThrow(/PrismaClient itself.*\$transaction\(async \(tx\)/);
    expect(() => toSqlTransaction({ ...prismaTx, _activeProvider: 'sqlserver' })).toThrow(/"sqlserver"/);
  });

  it('refuses a Kysely instance outside a transaction, and a MikroORM EntityManager outside em.transactional', () => {
    expect(() => toSqlTransaction({ isTransaction: false, executeQuery: async () => ({ rows: [] }) })).toThrow(/Kysely instance \(kysely\).*db\.transaction\(\)/);
    expect(() => toSqlTransaction({ isInTransaction: () => false, getTransactionContext: () => undefined })).toThrow(/EntityManager \(mikro-orm\).*em\.transactional/);
  });

  it('refuses an object of no known layer, listing every accepted one', () => {
    class OrderRepository {}
    for (const value of [new OrderRepository(), {}, null, 'tx']) {
      expect(() => toSqlTransaction(value)).toThrow(OutboxWriteError);
    }
    expect(() => toSqlTransaction(new OrderRepository())).toThrow(/class OrderRepository.*TypeORM EntityManager.*Prisma.*Drizzle.*Kysely.*MikroORM.*node-postgres.*SqlTransaction/s);
  });

  it('passes a hand-written SqlTransaction through unchanged', () => {
    const own = { dialect: 'postgres' as const, layer: 'slonik', query: async () => [], execute: async () => undefined };
    expect(toSqlTransaction(own)).toBe(own);
  });
});

describe('loadDataLayer', () => {
  it('names the missing package and the layer that needs it', () => {
    expect(() => loadDataLayer('@nest-outbox/no-such-layer', 'drizzle')).toThrow(OutboxConfigurationError);
    expect(() => loadDataLayer('@nest-outbox/no-such-layer', 'drizzle')).toThrow(/a drizzle transaction needs the package "@nest-outbox\/no-such-layer".*npm install @nest-outbox\/no-such-layer/);
  });
});
