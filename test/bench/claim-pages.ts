import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { Client, Pool } from 'pg';
import { createSqlOutboxStore, PgPoolConnection, PostgresOutboxDialect } from './support/outbox';
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
 * Then the price: the heap per published row kept, in a steady state of writes, drains, the
 * cleanup's deletes past a retention window and VACUUM (as autovacuum would run it); and the drain
 * of new rows written after a VACUUM of a history of published rows larger than the server's cache
 * (CLAIM_PAGES_HISTORY rows, default 1,000,000): on half-empty pages they land a few per old page
 * rather than together at the table's end.
 *
 *   npx tsc -p test/bench/tsconfig.json && node .bench/build/test/bench/claim-pages.js
 *   (CLAIM_PAGES_ROWS, default 40000; CLAIM_PAGES_ROUNDS, default 3; CLAIM_PAGES_BATCH, default 100;
 *   CLAIM_PAGES_PARTS, default "1,2,3": which parts to run)
 */
const ROWS = Number(process.env.CLAIM_PAGES_ROWS ?? 40_000);
const ROUNDS = Number(process.env.CLAIM_PAGES_ROUNDS ?? 3);
const BATCH = Number(process.env.CLAIM_PAGES_BATCH ?? 100);
const BACKLOG: Backlog = { count: ROWS, eventsPerAggregate: 4 };
const FILLFACTORS = [100, 50] as const;
const PARTS = new Set((process.env.CLAIM_PAGES_PARTS ?? '1,2,3').split(',').map(Number));

interface Drain {
  rowsPerSecond: number;
  claimMs: number;
  settleMs: number;
  hotShare: number;
  heapMb: number;
  indexMb: number;
}

/** The library's table, its fillfactor set as given. */
async function newTable(client: Client, schema: string, table: string, fillfactor: number, more = '') {
  const dialect = new PostgresOutboxDialect({ tableName: table, schema });
  for (const sql of dialect.createTable()) await client.query(sql);
  const quoted = `"${schema}"."${table}"`;
  await client.query(`ALTER TABLE ${quoted} SET (fillfactor = ${fillfactor}${more})`);
  return { dialect, quoted };
}

/** Claims and settles until nothing is left; the claims' and settles' durations. */
async function drainAll(client: Client, dialect: PostgresOutboxDialect, name: string) {
  const claims: number[] = [];
  const settles: number[] = [];
  let drained = 0;
  for (;;) {
    const token = randomUUID();
    const claim = dialect.claim('claim-pages', token, BATCH, 30_000);
    const claimStarted = performance.now();
    const { rows } = await client.query({ name: `claim_${name}`, text: claim.sql, values: claim.params });
    claims.push(performance.now() - claimStarted);
    if (rows.length === 0) break;
    const settle = dialect.markPublished(token, rows.map((row: { position: string }) => String(row.position)));
    const settleStarted = performance.now();
    await client.query({ name: `settle_${name}`, text: settle.sql, values: settle.params });
    settles.push(performance.now() - settleStarted);
    drained += rows.length;
  }
  return { claims, settles, drained };
}

async function drain(client: Client, schema: string, fillfactor: number, round: number): Promise<Drain> {
  const table = `outbox_ff${fillfactor}_${round}`;
  const { dialect, quoted } = await newTable(client, schema, table, fillfactor);
  await seedOutboxTable(client, schema, table, 'claim-pages', BACKLOG);
  const started = performance.now();
  const { claims, settles, drained } = await drainAll(client, dialect, table);
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

const KEPT = 40_000;
const WRITTEN_PER_CYCLE = 2_000;
const CYCLES = 40;

/**
 * Writes, drains, deletes published rows past the newest KEPT (the cleanup's retention) and runs
 * VACUUM ANALYZE every fifth cycle, autovacuum off so that it runs at the same points for both: the heap's
 * bytes per row kept at the end, after a last VACUUM.
 */
async function steadyState(client: Client, schema: string, fillfactor: number): Promise<{ bytesPerRow: number; rowsPerSecond: number }> {
  const table = `outbox_steady_ff${fillfactor}`;
  const { dialect, quoted } = await newTable(client, schema, table, fillfactor, ', autovacuum_enabled = off');
  let written = 0;
  let drainSeconds = 0;
  for (let cycle = 1; cycle <= CYCLES; cycle++) {
    await client.query(
      `INSERT INTO ${quoted} (id, event_type, event_version, aggregate_type, aggregate_id, transport, destination, occurred_at, headers, payload)
       SELECT gen_random_uuid(), 'bench.parcel-registered', 1, 'parcel', 'p-' || (g % 500), 'default', 'claim-pages', now(), '{}', repeat('x', 400)
       FROM generate_series(1, ${WRITTEN_PER_CYCLE}) AS g ORDER BY g`,
    );
    written += WRITTEN_PER_CYCLE;
    const started = performance.now();
    await drainAll(client, dialect, table);
    drainSeconds += (performance.now() - started) / 1000;
    await client.query(`DELETE FROM ${quoted} WHERE position <= (SELECT max(position) FROM ${quoted}) - ${KEPT}`);
    if (cycle % 5 === 0) await client.query(`VACUUM ANALYZE ${quoted}`);
  }
  await client.query(`VACUUM ${quoted}`);
  const [{ heap, kept }] = (await client.query(`SELECT pg_table_size($1::regclass) AS heap, (SELECT count(*) FROM ${quoted}) AS kept`, [quoted])).rows;
  await client.query(`DROP TABLE ${quoted}`);
  return { bytesPerRow: Number(heap) / Number(kept), rowsPerSecond: written / drainSeconds };
}

const HISTORY = Number(process.env.CLAIM_PAGES_HISTORY ?? 1_000_000);
const NEW_ROWS = 50_000;

/**
 * Published rows kept (written, drained; payloads of 50–350 bytes, as events vary), VACUUM ANALYZE
 * (statistics that count no pending row: a quiet time), then NEW_ROWS new ones of the same sizes
 * drained: where they landed and how fast they went. Both drains go through the relay's store, which
 * keeps the table's planner statistics as a relay does.
 */
async function afterHistory(client: Client, pool: Pool, schema: string, fillfactor: number): Promise<{ rowsPerSecond: number; pages: number }> {
  const table = `outbox_history_ff${fillfactor}`;
  const { quoted } = await newTable(client, schema, table, fillfactor);
  const columns = 'id, event_type, event_version, aggregate_type, aggregate_id, transport, destination, occurred_at, headers, payload';
  const write = (count: number) =>
    client.query(
      `INSERT INTO ${quoted} (${columns}) SELECT gen_random_uuid(), 'bench.order-placed', 1, 'order', 'order-' || (n % 1000), 'default', 'claim-pages', now(), '{}', json_build_object('note', repeat('x', 50 + ((n::bigint * 7919) % 300)::int)) FROM generate_series(1, ${count}) AS n`,
    );
  const drainThroughStore = async () => {
    const store = createSqlOutboxStore(new PgPoolConnection(pool as never), { tableName: table, schema });
    let drained = 0;
    for (;;) {
      const token = randomUUID();
      const rows = await store.claim({ owner: 'claim-pages', token, limit: BATCH, leaseMs: 30_000 });
      if (rows.length === 0) return drained;
      await store.markPublished(token, rows.map((row) => row.position));
      drained += rows.length;
    }
  };
  await write(HISTORY);
  await drainThroughStore();
  await client.query(`VACUUM ANALYZE ${quoted}`);
  await write(NEW_ROWS);
  const [{ pages }] = (await client.query(`SELECT count(DISTINCT (ctid::text::point)[0])::int AS pages FROM ${quoted} WHERE status = 'pending'`)).rows;
  const started = performance.now();
  const drained = await drainThroughStore();
  const seconds = (performance.now() - started) / 1000;
  if (drained !== NEW_ROWS) throw new Error(`drained ${drained} of ${NEW_ROWS} new rows of ${table}`);
  await client.query(`DROP TABLE ${quoted}`);
  return { rowsPerSecond: drained / seconds, pages: Number(pages) };
}

async function main(): Promise<void> {
  const { postgresUrl } = benchServices();
  const schema = `claim_pages_${suffix()}`;
  const client = new Client({ connectionString: postgresUrl });
  await client.connect();
  const pool = new Pool({ connectionString: postgresUrl, max: 2 });
  await client.query(`CREATE SCHEMA ${schema}`);
  const results = new Map<number, Drain[]>(FILLFACTORS.map((fillfactor) => [fillfactor, []]));
  const steady = new Map<number, { bytesPerRow: number; rowsPerSecond: number }>();
  const history = new Map<number, { rowsPerSecond: number; pages: number }>();
  const loadBefore = loadavg()[0];
  try {
    for (let round = 1; round <= ROUNDS && PARTS.has(1); round++) {
      for (const fillfactor of FILLFACTORS) results.get(fillfactor)!.push(await drain(client, schema, fillfactor, round));
    }
    for (const fillfactor of FILLFACTORS) if (PARTS.has(2)) steady.set(fillfactor, await steadyState(client, schema, fillfactor));
    for (const fillfactor of FILLFACTORS) if (PARTS.has(3)) history.set(fillfactor, await afterHistory(client, pool, schema, fillfactor));
  } finally {
    await client.query(`DROP SCHEMA ${schema} CASCADE`);
    await client.end();
    await pool.end();
  }
  console.log(`${cpus().length} × ${cpus()[0]?.model}, load ${fmt(loadBefore, 2)} → ${fmt(loadavg()[0], 2)}, Node ${process.versions.node}`);
  if (PARTS.has(1)) printDrains(results);
  if (PARTS.has(2)) printSteadyState(steady);
  if (PARTS.has(3)) printAfterHistory(history);
}

function printDrains(results: Map<number, Drain[]>): void {
  const of = (fillfactor: number, pick: (drain: Drain) => number) => median(results.get(fillfactor)!.map(pick));
  console.log(`\n${ROWS} rows (P1's backlog, 4 events per aggregate), claims of ${BATCH}, ${ROUNDS} rounds alternating.`);
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

function printSteadyState(steady: Map<number, { bytesPerRow: number; rowsPerSecond: number }>): void {
  console.log(`\nSteady state: ${CYCLES} cycles of ${WRITTEN_PER_CYCLE} rows written (~400-byte payloads, 500 aggregates), drained, published rows past the newest ${KEPT} deleted, VACUUM ANALYZE every 5 cycles.`);
  console.log('| fillfactor | rows/s drained | × 100 | heap bytes per row kept | × 100 |');
  console.log('|---|---|---|---|---|');
  const base = steady.get(100)!;
  for (const fillfactor of FILLFACTORS) {
    const { rowsPerSecond, bytesPerRow } = steady.get(fillfactor)!;
    console.log(`| ${fillfactor} | ${fmt(rowsPerSecond, 0)} | ${fmt(rowsPerSecond / base.rowsPerSecond, 2)} | ${fmt(bytesPerRow, 0)} | ${fmt(bytesPerRow / base.bytesPerRow, 2)} |`);
  }
}

function printAfterHistory(history: Map<number, { rowsPerSecond: number; pages: number }>): void {
  console.log(`\nAfter a history: ${fmt(HISTORY, 0)} published rows kept, VACUUM ANALYZE, then ${fmt(NEW_ROWS, 0)} new rows drained by the relay's store.`);
  console.log('| fillfactor | pages the new rows landed on | rows/s drained | × 100 |');
  console.log('|---|---|---|---|');
  for (const fillfactor of FILLFACTORS) {
    const { rowsPerSecond, pages } = history.get(fillfactor)!;
    console.log(`| ${fillfactor} | ${fmt(pages, 0)} | ${fmt(rowsPerSecond, 0)} | ${fmt(rowsPerSecond / history.get(100)!.rowsPerSecond, 2)} |`);
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
