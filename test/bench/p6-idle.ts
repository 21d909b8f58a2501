import { Client } from 'pg';
import { Registry } from 'prom-client';
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
  const off = await measureIdle(context, false);
  const on = await measureIdle(context, true);
  const rows = (label: string, m: IdleCost) => [
    [`${label}: transactions in its database (pg_stat_database xact_commit + xact_rollback delta)`, fmt(m.xactsPerSecond, 2)],
    [`${label}: statements its pg clients sent (counted in the process)`, fmt(m.statementsPerSecond, 2)],
    [`${label}: rows returned to it (tup_returned delta)`, fmt(m.tupReturnedPerSecond, 2)],
  ];
  // The server counters land up to a second late at either end of the window: one transaction of slack.
  const met = (m: IdleCost) => m.xactsPerSecond - 1 / m.seconds <= 1 && m.statementsPerSecond <= 1;
  return {
    id: 'P6',
    title: `P6 — idle cost of one relay at default settings, without and with metrics (${fmt(off.seconds)} s each, no writes)`,
    body: [
      ...table(['measure', 'per second'], [...rows('metrics off', off), ...rows('metrics on, scraped every second', on)]),
      '',
      `Defaults: \`pollIntervalMs\` ${OUTBOX_DEFAULTS.pollIntervalMs}, \`notifications\` ${String(OUTBOX_DEFAULTS.notifications)} (one connection held in LISTEN, which costs no statements while idle), ` +
        `cleanup every ${OUTBOX_DEFAULTS.cleanup.intervalMs / 1000} s. With metrics, \`metrics: { registry }\` and the default \`stats.refreshIntervalMs\` (5 s), and the registry scraped every second ` +
        `(five times more often than a usual Prometheus setup): the stats query runs at most once per refresh interval, whatever the scrape rate. ` +
        `The server counters are read from the \`postgres\` database, so the measurement is not in them. ` +
        `Started ${WARMUP_MS / 1000} s after the app, with an empty outbox table. Backends publish their counters up to a second late, so the server figure ` +
        `is ±1 transaction per window; the aim counts as met when it is within that and the exact count of statements sent is ≤ 1/s.`,
    ],
    summary: [
      { bench: 'P6', figure: 'idle queries/s, one relay, defaults', value: `${fmt(off.xactsPerSecond, 2)} server, ${fmt(off.statementsPerSecond, 2)} sent`, aim: '≤ 1/s', met: met(off) },
      {
        bench: 'P6',
        figure: 'idle queries/s, one relay, metrics on (scraped 1/s)',
        value: `${fmt(on.xactsPerSecond, 2)} server, ${fmt(on.statementsPerSecond, 2)} sent`,
        aim: '≤ 1/s',
        met: met(on),
      },
    ],
  };
}

interface IdleCost {
  seconds: number;
  xactsPerSecond: number;
  statementsPerSecond: number;
  tupReturnedPerSecond: number;
}

async function measureIdle(context: BenchContext, metrics: boolean): Promise<IdleCost> {
  const { services, sizes } = context;
  const database = `bench_idle_${suffix()}`;
  const maintenanceUrl = databaseUrl(services.postgresUrl, 'postgres');
  const url = databaseUrl(services.postgresUrl, database);
  await withClient(maintenanceUrl, (client) => client.query(`CREATE DATABASE ${database}`));
  const sampler = new Client({ connectionString: maintenanceUrl });
  await sampler.connect();
  const statements = countStatementsTo(database);
  let app: Awaited<ReturnType<typeof startBenchApp>> | undefined;
  const registry = new Registry();
  const scraper = metrics ? setInterval(() => void registry.metrics(), 1_000) : undefined;
  try {
    await withClient(url, (client) => client.query('CREATE SCHEMA bench_p6'));
    app = await startBenchApp({
      postgresUrl: url,
      schema: 'bench_p6',
      migrate: true,
      kafka: { brokers: services.kafkaBrokers, clientId: 'bench-p6' },
      outbox: { transport: 'KAFKA', resolveTopic: () => `bench-p6-${database}`, ...(metrics ? { metrics: { registry } } : {}) },
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
    context.log(`P6 metrics ${metrics ? 'on' : 'off'}: ${fmt(xactsPerSecond, 2)} transactions/s (server), ${fmt(statementsPerSecond, 2)} statements/s (client)`);
    return { seconds, xactsPerSecond, statementsPerSecond, tupReturnedPerSecond: (after.tupReturned - before.tupReturned) / seconds };
  } finally {
    clearInterval(scraper);
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
