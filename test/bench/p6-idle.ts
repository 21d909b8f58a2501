import { Client } from 'pg';
import { databaseUrl, sleep, suffix, withClient } from './support/env';
import { startBenchApp } from './support/nest-apps';
import { OUTBOX_DEFAULTS } from './support/outbox';
import { type BenchContext, type Section, table } from './support/report';
import { fmt } from './support/stats';

// PostgreSQL backends that go idle within a second of their last stats flush publish their
// counters up to 10 s later: the window opens after the startup statements have surely landed.
const WARMUP_MS = 12_000;

/**
 * P6: what one idle relay (OutboxModule, default options, Kafka client) costs the database. It
 * runs in a database of its own, so that pg_stat_database counts only its transactions; the
 * counters are read from a connection to another database, so the measurement adds nothing to
 * them. As a cross-check the process counts the statements its own pg clients send to the
 * benchmark database.
 */
export async function p6Idle(context: BenchContext): Promise<Section> {
  const { services, sizes } = context;
  const database = `bench_idle_${suffix()}`;
  const maintenanceUrl = databaseUrl(services.postgresUrl, 'postgres');
  const url = databaseUrl(services.postgresUrl, database);
  await withClient(maintenanceUrl, (client) => client.query(`CREATE DATABASE ${database}`));
  const sampler = new Client({ connectionString: maintenanceUrl });
  await sampler.connect();
  const statements = countStatementsTo(database);
  let app: Awaited<ReturnType<typeof startBenchApp>> | undefined;
  try {
    await withClient(url, (client) => client.query('CREATE SCHEMA bench_p6'));
    app = await startBenchApp({
      postgresUrl: url,
      schema: 'bench_p6',
      migrate: true,
      kafka: { brokers: services.kafkaBrokers, clientId: 'bench-p6' },
      outbox: { transport: 'KAFKA', resolveTopic: () => `bench-p6-${database}` },
    });
    await sleep(WARMUP_MS);
    const read = async () => {
      const row = (await sampler.query(`SELECT xact_commit + xact_rollback AS xacts, tup_returned FROM pg_stat_database WHERE datname = $1`, [database])).rows[0];
      return { xacts: Number(row.xacts), tupReturned: Number(row.tup_returned), statements: statements.count, at: performance.now() };
    };
    // Backends publish their counters at most once a second, so both reads lag alike in this steady state.
    const before = await read();
    await sleep(sizes.idleSeconds * 1000);
    const after = await read();
    const seconds = (after.at - before.at) / 1000;
    const xactsPerSecond = (after.xacts - before.xacts) / seconds;
    const statementsPerSecond = (after.statements - before.statements) / seconds;
    context.log(`P6 ${fmt(xactsPerSecond, 2)} transactions/s (server), ${fmt(statementsPerSecond, 2)} statements/s (client)`);
    return {
      id: 'P6',
      title: `P6 — idle cost of one relay at default settings (${fmt(seconds)} s without writes)`,
      body: [
        ...table(
          ['measure', 'per second'],
          [
            ['transactions in its database (pg_stat_database xact_commit + xact_rollback delta)', fmt(xactsPerSecond, 2)],
            ['statements its pg clients sent (counted in the process)', fmt(statementsPerSecond, 2)],
            ['rows returned to it (tup_returned delta)', fmt((after.tupReturned - before.tupReturned) / seconds, 2)],
          ],
        ),
        '',
        `Defaults: \`pollIntervalMs\` ${OUTBOX_DEFAULTS.pollIntervalMs}, \`notifications\` ${String(OUTBOX_DEFAULTS.notifications)} (one connection held in LISTEN, which costs no statements while idle), ` +
          `cleanup every ${OUTBOX_DEFAULTS.cleanup.intervalMs / 1000} s. The server counters are read from the \`postgres\` database, so the measurement is not in them. ` +
          `Started ${WARMUP_MS / 1000} s after the app, with an empty outbox table. Backends publish their counters up to a second late, so the server figure ` +
          `is ±1 transaction per window; the aim counts as met when it is within that and the exact count of statements sent is ≤ 1/s.`,
      ],
      summary: [
        {
          bench: 'P6',
          figure: 'idle queries/s, one relay, defaults',
          value: `${fmt(xactsPerSecond, 2)} server, ${fmt(statementsPerSecond, 2)} sent`,
          aim: '≤ 1/s',
          // The server counters land up to a second late at either end of the window: one transaction of slack.
          met: xactsPerSecond - 1 / seconds <= 1 && statementsPerSecond <= 1,
        },
      ],
    };
  } finally {
    statements.restore();
    await app?.app.close();
    await sampler.end();
    await withClient(maintenanceUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
  }
}

/** Counts `query` calls of pg clients connected to `database` (TypeORM's driver uses the same `pg` module). */
function countStatementsTo(database: string): { readonly count: number; restore(): void } {
  const prototype = Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  const counter = { count: 0 };
  prototype.query = function (this: { database?: string }, ...args: unknown[]) {
    if (this.database === database) counter.count++;
    return original.apply(this, args);
  };
  return {
    get count() {
      return counter.count;
    },
    restore: () => {
      prototype.query = original;
    },
  };
}
