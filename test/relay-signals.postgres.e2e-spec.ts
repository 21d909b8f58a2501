import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { CreateOutboxTable, OutboxModule, OutboxPublisher, type OutboxTransport } from '@nest-outbox/outbox';
import { OutboxHealthIndicator } from '@nest-outbox/outbox/observability';
import { postgresAdmin, privatePostgresSchema } from './support/databases';
import { sampleValue } from './support/prometheus-text';
import { silentLogger } from './support/silent-logger';
import { waitFor } from './support/wait-for';

/**
 * The liveness signals measure finished rounds: while every claim fails (PostgreSQL refuses the
 * claim's UPDATE, the stats reads still work), the last-round gauge stands still and the health
 * check turns down as a stalled relay; when claims work again both recover and the row goes out.
 */
describe('relay liveness signals while every claim fails (PostgreSQL)', () => {
  let database: Awaited<ReturnType<typeof privatePostgresSchema>>;
  let module: TestingModule;
  const registry = new Registry();
  const delivered: string[] = [];
  const transport: OutboxTransport = { name: 'recording', publish: async (outgoing) => void delivered.push(outgoing.envelope.id) };
  const sql = (statement: string) => postgresAdmin(database.url, `SET search_path = ${database.schema}; ${statement}`);
  const lastRound = async () => sampleValue(await registry.metrics(), 'outbox_relay_last_round_timestamp_seconds')!;
  // A sequence is outside transactions: it counts the claims the trigger refused.
  const refusedClaims = async () => {
    const [row] = await module.get(DataSource).query(`SELECT last_value, is_called FROM ${database.schema}.refused_claims`);
    return row.is_called ? Number(row.last_value) : 0;
  };

  beforeAll(async () => {
    database = await privatePostgresSchema('signals');
    module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({
          type: 'postgres', url: database.url, schema: database.schema, extra: { options: `-c search_path=${database.schema}` },
          migrations: [CreateOutboxTable], migrationsRun: true, logging: false, retryAttempts: 0,
        } as TypeOrmModuleOptions),
        OutboxModule.forRoot({
          transport, pollIntervalMs: 100, publishTimeoutMs: 500, leaseMs: 5_000,
          metrics: { registry }, stats: { refreshIntervalMs: 50 }, health: { maxLagMs: null, maxRoundAgeMs: 1_500 },
        }),
      ],
    }).setLogger(silentLogger).compile();
    module.useLogger(false);
    await module.init();
    await sql(`
      CREATE SEQUENCE refused_claims;
      CREATE FUNCTION refuse_claims() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM nextval('refused_claims'); RAISE EXCEPTION 'claims refused by the test'; END $$;`);
  });

  afterAll(async () => {
    await module?.close();
    await database?.drop();
  });

  it('stands still and turns health down while claims fail, and recovers when they work again', async () => {
    const health = module.get(OutboxHealthIndicator);
    await waitFor('a first finished round', async () => (await lastRound()) > 0);
    expect(await health.isHealthy('outbox')).toEqual({ outbox: expect.objectContaining({ status: 'up' }) });

    // Statement-level: it fires on every claim, even one that would match no row.
    await sql('CREATE TRIGGER refuse_claims BEFORE UPDATE ON outbox_messages FOR EACH STATEMENT EXECUTE FUNCTION refuse_claims()');
    const [id] = await module.get(DataSource).transaction((manager) =>
      module.get(OutboxPublisher).add(manager, { type: 'order.placed', aggregateType: 'order', aggregateId: 'o-1', topic: 'orders', payload: { n: 1 } }),
    );
    await waitFor('a refused claim', async () => (await refusedClaims()) > 0);
    const stoodAt = await lastRound();
    const refusedBefore = await refusedClaims();

    const down = await waitFor('health down as a stalled relay', async () => {
      const result = await health.isHealthy('outbox');
      return result.outbox.status === 'down' ? result.outbox : undefined;
    });
    expect(down).toMatchObject({ pending: 1, relayRunning: true, reason: expect.stringMatching(/has not finished a round for .* while 1 message\(s\) are pending, over health\.maxRoundAgeMs/) });
    expect(await refusedClaims()).toBeGreaterThan(refusedBefore + 5);
    expect(await lastRound()).toBe(stoodAt);
    expect(delivered).not.toContain(id);

    await sql('DROP TRIGGER refuse_claims ON outbox_messages');
    await waitFor('the row published once claims work', () => delivered.includes(id));
    await waitFor('health up again', async () => (await health.isHealthy('outbox')).outbox.status === 'up');
    expect(await lastRound()).toBeGreaterThan(stoodAt);
  });
});
