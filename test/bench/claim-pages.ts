import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { Client } from 'pg';
import { PostgresOutboxDialect } from '../../libs/outbox/src/sql/dialects/postgres-outbox.dialect';
import { benchServices, suffix } from './support/env';
import { seedOutboxTable, type Backlog } from './support/seed';
import { fmt, median } from './support/stats';

/**
 * The PostgreSQL cost of the table relay's claim and settle statements on the library's table as
 * made (`fillfactor = 50`) and on the same table with full pages (`fillfactor = 100`, PostgreSQL's
 * default and the library's before), side by side: each round seeds both with P1's backlog and
 * drains them with the relay's own statements in a claim → settle loop on one connection, the
 * variants alternating. No broker and no relay process: the figures are the statements' cost.
 *
 *   npx tsc -p test/bench/tsconfig.json && node .bench/build/test/bench/claim-pages.js
 *   (CLAIM_PAGES_ROWS, default 40000; CLAIM_PAGES_ROUNDS, default 3; CLAIM_PAGES_BATCH, default 100)
 */
const ROWS = Number(process.env.CLAIM_PAGES_ROWS ?? 40_000);
const ROUNDS = Number(process.env.CLAIM_PAGES_ROUNDS ?? 3);
const BATCH = Number(process.env.CLAIM_PAGES_BATCH ?? 100);
const BACKLOG: Backlog = { count: ROWS, eventsPerAggregate: 4 };
const FILLFACTORS = [100, 50] as const;

interface Drain {
  rowsPerSecond: number;
  claimMs: number;
  settleMs: number;
  hotShare: number;
  heapMb: number;
  indexMb: number;
}

async function drain(client: Client, schema: string, fillfactor: number, round: number): Promise<Drain> {
  const table = `outbox_ff${fillfactor}_${round}`;
  const dialect = new PostgresOutboxDialect({ tableName: table, schema });
  for (const sql of dialect.createTable()) await client.query(sql);
  const quoted = `"${schema}"."${table}"`;
  await client.query(`ALTER TABLE ${quoted} SET (fillfactor = ${fillfactor})`);
  await seedOutboxTable(client, schema, table, 'claim-pages', BACKLOG);
  const claims: number[] = [];
  const settles: number[] = [];
  let drained = 0;
  const started = performance.now();
  for (;;) {
    const token = randomUUID();
    const claim = dialect.claim('claim-pages', token, BATCH, 30_000);
    const claimStarted = performance.now();
    const { rows } = await client.query({ name: `claim_${table}`, text: claim.sql, values: claim.params });
    claims.push(performance.now() - claimStarted);
    if (rows.length === 0) break;
    const settle = dialect.markPublished(token, rows.map((row: { position: string }) => String(row.position)));
    const settleStarted = performance.now();
    await client.query({ name: `settle_${table}`, text: settle.sql, values: settle.params });
    settles.push(performance.now() - settleStarted);
    drained += rows.length;
  }
  const seconds = (performance.now() - started) / 1000;
  if (drained !== ROWS) throw new Error(`drained ${drained} of ${ROWS} rows of ${table}`);
  // Every update of the drain, and those PostgreSQL made HOT: this session's counts, flushed to the
  // view when the backend next goes idle (PostgreSQL 15 and later; before, they may lag a little).
  await client.query(`SELECT pg_stat_force_next_flush()`).catch(() => undefined);
  const [counts] = (await client.query(`SELECT n_tup_upd AS updated, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE relid = $1::regclass`, [quoted])).rows;
  const [sizes] = (await client.query(`SELECT pg_table_size($1::regclass) AS heap, pg_indexes_size($1::regclass) AS indexes`, [quoted])).rows;
  await client.query(`DROP TABLE ${quoted}`);
  return {
    rowsPerSecond: drained / seconds,
    claimMs: median(claims),
    settleMs: median(settles),
    hotShare: Number(counts?.hot ?? 0) / Math.max(1, Number(counts?.updated ?? 0)),
    heapMb: Number(sizes.heap) / 1e6,
    indexMb: Number(sizes.indexes) / 1e6,
  };
}

async function main(): Promise<void> {
  const { postgresUrl } = benchServices();
  const schema = `claim_pages_${suffix()}`;
  const client = new Client({ connectionString: postgresUrl });
  await client.connect();
  await client.query(`CREATE SCHEMA ${schema}`);
  const results = new Map<number, Drain[]>(FILLFACTORS.map((fillfactor) => [fillfactor, []]));
  const loadBefore = loadavg()[0];
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const fillfactor of FILLFACTORS) results.get(fillfactor)!.push(await drain(client, schema, fillfactor, round));
    }
  } finally {
    await client.query(`DROP SCHEMA ${schema} CASCADE`);
    await client.end();
  }
  const of = (fillfactor: number, pick: (drain: Drain) => number) => median(results.get(fillfactor)!.map(pick));
  console.log(`${ROWS} rows (P1's backlog, 4 events per aggregate), claims of ${BATCH}, ${ROUNDS} rounds alternating; ${cpus().length} × ${cpus()[0]?.model}, load ${fmt(loadBefore, 2)} → ${fmt(loadavg()[0], 2)}, Node ${process.versions.node}`);
  console.log('| fillfactor | rows/s (median) | × 100 | claim (median ms) | settle (median ms) | updates HOT | heap after (MB) | indexes after (MB) |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const fillfactor of FILLFACTORS) {
    const rate = of(fillfactor, (d) => d.rowsPerSecond);
    console.log(
      `| ${fillfactor}${fillfactor === 50 ? ' (as made)' : ''} | ${fmt(rate, 0)} (${results.get(fillfactor)!.map((d) => fmt(d.rowsPerSecond, 0)).join(', ')}) | ${fmt(rate / of(100, (d) => d.rowsPerSecond), 2)} | ` +
        `${fmt(of(fillfactor, (d) => d.claimMs), 2)} | ${fmt(of(fillfactor, (d) => d.settleMs), 2)} | ${fmt(100 * of(fillfactor, (d) => d.hotShare), 0)} % | ` +
        `${fmt(of(fillfactor, (d) => d.heapMb), 1)} | ${fmt(of(fillfactor, (d) => d.indexMb), 1)} |`,
    );
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
