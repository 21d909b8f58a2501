import { randomUUID } from 'node:crypto';
import { Client, Pool } from 'pg';
import { privateSchema } from './support/env';
import {
  createSqlOutboxMaintenanceStore,
  createSqlOutboxPartitionStore,
  createSqlOutboxStore,
  OutboxCleaner,
  PgPoolConnection,
  PostgresOutboxDialect,
  type OutboxPartitioning,
} from './support/outbox';
import { type BenchContext, type Section, type SummaryRow, table } from './support/report';
import { fmt, fmtRatio, mb, median, ratio } from './support/stats';

const DAY_MS = 86_400_000;
const HISTORY_DAYS = 10;
const RETENTION_MS = 7 * DAY_MS;
const PARTITIONING: OutboxPartitioning = { interval: 'day', ahead: 3 };
const CLAIM_ROUNDS = 5;
const silent = { log: () => undefined, warn: () => undefined, error: () => undefined };

interface Result {
  label: string;
  seedSeconds: number;
  claimPerSecond: number;
  claimed: number;
  cleanupSeconds: number;
  removedRows: number;
  walBytes: number;
  capped: boolean;
  partitionsDropped: number;
}

/**
 * P10: the same history (published rows spread over 10 days) and the same pending backlog, in a
 * plain table and in one partitioned by day: the claim rate of the store (claim + markPublished,
 * no broker), then one cleanup to 7 days' retention — row deletes against partition drops — timed,
 * with the WAL it wrote (pg_stat_wal, this server alone).
 */
export async function p10PartitionedTable(context: BenchContext): Promise<Section> {
  const { services, sizes } = context;
  const { schema, drop } = await privateSchema(services.postgresUrl, 'bench_p10');
  const admin = new Client({ connectionString: services.postgresUrl });
  await admin.connect();
  const pool = new Pool({ connectionString: services.postgresUrl, max: 4 });
  const connection = new PgPoolConnection(pool as never);
  const tables = [false, true].map((partitioned) => {
    const location = { tableName: partitioned ? 'outbox_partitioned' : 'outbox_plain', schema };
    return { partitioned, location, quoted: `"${schema}"."${location.tableName}"`, label: partitioned ? 'partitioned by day' : 'plain', rates: [] as number[], claimed: 0, seedSeconds: 0 };
  });
  const results: Result[] = [];
  try {
    for (const table of tables) {
      const dialect = new PostgresOutboxDialect(table.location, table.partitioned ? { partitioning: PARTITIONING } : {});
      for (const sql of dialect.createTable()) await admin.query(sql);
      // The partitions the app would have made over the history, as if it had run then.
      if (table.partitioned) await createSqlOutboxPartitionStore(connection, table.location, PARTITIONING).makeAhead(new Date(Date.now() - HISTORY_DAYS * DAY_MS));
      const seedStarted = Date.now();
      await seedHistory(admin, table.quoted, sizes.partitionRows);
      table.seedSeconds = (Date.now() - seedStarted) / 1000;
      context.log(`P10 ${table.label}: seeded ${fmt(sizes.partitionRows, 0)} published rows in ${fmt(table.seedSeconds)} s`);
    }
    // Claim rounds side by side, the order alternating, so that the machine's other load falls on both alike.
    for (let round = 0; round < CLAIM_ROUNDS; round++) {
      for (const table of round % 2 === 0 ? tables : [...tables].reverse()) {
        await seedPending(admin, table.quoted, sizes.partitionPending);
        const store = createSqlOutboxStore(connection, table.location);
        let claimed = 0;
        const started = performance.now();
        for (;;) {
          const token = randomUUID();
          const rows = await store.claim({ owner: 'bench', token, limit: 100, leaseMs: 30_000 });
          if (rows.length === 0) break;
          await store.markPublished(token, rows.map((row) => row.position));
          claimed += rows.length;
        }
        table.rates.push(claimed / ((performance.now() - started) / 1000));
        table.claimed += claimed;
      }
    }
    for (const table of tables) {
      context.log(`P10 ${table.label}: claim + settle ${table.rates.map((rate) => fmt(rate, 0)).join(', ')} rows/s`);
      // The cleanup on connections of its own, as an instance's cleanup runs beside its relay.
      const cleanupPool = new Pool({ connectionString: services.postgresUrl, max: 2 });
      const cleanupConnection = new PgPoolConnection(cleanupPool as never);
      const partitioning = table.partitioned ? PARTITIONING : undefined;
      const cleaner = new OutboxCleaner(
        createSqlOutboxMaintenanceStore(cleanupConnection, table.location, partitioning),
        { publishedRetentionMs: RETENTION_MS, deadRetentionMs: null, batchSize: 500, maxBatchesPerRun: 100 },
        silent,
        partitioning && createSqlOutboxPartitionStore(cleanupConnection, table.location, partitioning),
      );
      const before = await rowsAndWal(admin, table.quoted);
      const cleanupStarted = performance.now();
      let capped = false;
      let partitionsDropped = 0;
      for (;;) {
        const outcome = await cleaner.run();
        partitionsDropped += outcome.partitions?.dropped.length ?? 0;
        if (outcome.published === 0 && (outcome.partitions?.dropped.length ?? 0) === 0) break;
        if (performance.now() - cleanupStarted > sizes.partitionCleanupCapMs) {
          capped = true;
          break;
        }
      }
      const cleanupSeconds = (performance.now() - cleanupStarted) / 1000;
      await cleanupPool.end();
      const after = await rowsAndWal(admin, table.quoted);
      const result: Result = {
        label: table.label,
        seedSeconds: table.seedSeconds,
        claimPerSecond: median(table.rates),
        claimed: table.claimed,
        cleanupSeconds,
        removedRows: before.rows - after.rows,
        walBytes: after.walBytes - before.walBytes,
        capped,
        partitionsDropped,
      };
      context.log(`P10 ${table.label}: cleanup removed ${fmt(result.removedRows, 0)} rows in ${fmt(cleanupSeconds, 2)} s, ${fmt(mb(result.walBytes), 2)} MiB WAL${capped ? ' (capped)' : ''}`);
      results.push(result);
    }
  } finally {
    await pool.end();
    await admin.end();
    await drop();
  }

  const [plain, partitioned] = results;
  const perMillion = (value: number, rows: number) => (rows > 0 ? (value / rows) * 1_000_000 : Number.NaN);
  const summary: SummaryRow[] = [
    {
      bench: 'P10',
      figure: `claim rate, partitioned / plain (${fmt(sizes.partitionRows, 0)} rows kept)`,
      value: fmtRatio(ratio(partitioned.claimPerSecond, plain.claimPerSecond)),
      aim: '≥ 0.8×',
      met: partitioned.claimPerSecond >= 0.8 * plain.claimPerSecond,
    },
    {
      bench: 'P10',
      figure: 'cleanup WAL bytes per removed row, partitioned / plain',
      value: fmtRatio(ratio(partitioned.walBytes / Math.max(1, partitioned.removedRows), plain.walBytes / Math.max(1, plain.removedRows))),
      aim: '≤ 0.1×',
      met: partitioned.walBytes / Math.max(1, partitioned.removedRows) <= 0.1 * (plain.walBytes / Math.max(1, plain.removedRows)),
    },
  ];
  return {
    id: 'P10',
    title: `P10 — a partitioned outbox table against a plain one: ${fmt(sizes.partitionRows, 0)} published rows over ${HISTORY_DAYS} days, ${fmt(sizes.partitionPending, 0)} pending`,
    body: [
      ...table(
        ['table', 'claim + settle rows/s', 'cleanup s', 'rows removed', 'WAL MiB', 'WAL bytes per removed row', 'cleanup s per million rows', 'partitions dropped'],
        results.map((r) => [
          r.label,
          `${fmt(r.claimPerSecond)} (median of ${CLAIM_ROUNDS} rounds, ${fmt(r.claimed, 0)} rows)`,
          `${fmt(r.cleanupSeconds, 2)}${r.capped ? ' (capped)' : ''}`,
          fmt(r.removedRows, 0),
          fmt(mb(r.walBytes), 2),
          fmt(r.walBytes / Math.max(1, r.removedRows), 1),
          fmt(perMillion(r.cleanupSeconds, r.removedRows), 2),
          String(r.partitionsDropped),
        ]),
      ),
      '',
      `The store's claim (batches of 100, the library's SQL) and markPublished in a loop, no broker, over ${fmt(sizes.partitionPending, 0)} pending rows of today per round, ` +
        `the two tables taking turns; ` +
        `then \`OutboxCleaner\` runs (batchSize 500, 100 batches a run) with 7 days' retention until a run removes nothing` +
        `${results.some((r) => r.capped) ? ` or ${fmt(sizes.partitionCleanupCapMs / 1000, 0)} s have passed` : ''}. ` +
        `WAL bytes are the move of the WAL insert position around the cleanup (the benchmark's server runs nothing else; autovacuum may add to either row). ` +
        `The partitioned table drops the day partitions that ended 7 days ago; rows of the day 7 days back wait for tomorrow's drop, hence fewer rows removed.`,
    ],
    summary,
  };
}

/** Published rows spread evenly over the last HISTORY_DAYS days, each published a second after it was made. */
async function seedHistory(client: Client, table: string, published: number): Promise<void> {
  const columns = `id, event_type, event_version, aggregate_type, aggregate_id, transport, destination, occurred_at, headers, payload, status, created_at, published_at`;
  const chunk = 500_000;
  for (let from = 0; from < published; from += chunk) {
    await client.query(
      `INSERT INTO ${table} (${columns})
       SELECT gen_random_uuid(), 'bench.order-placed', 1, 'order', 'order-' || (n % 1000), 'default', 'bench-p10', t, '{}',
              '{"note":"benchmark event of a partitioned outbox table"}', 'published', t, t + interval '1 second'
       FROM generate_series($1::bigint, $2::bigint) AS n, LATERAL (SELECT now() - $3 * interval '1 millisecond' * (1 - n::float8 / $4) AS t) AS at`,
      [from, Math.min(published, from + chunk) - 1, HISTORY_DAYS * DAY_MS - 60_000, published],
    );
  }
  await client.query(`ANALYZE ${table}`);
}

/** Today's pending rows over 1,000 aggregates, as writers add them. */
async function seedPending(client: Client, table: string, pending: number): Promise<void> {
  await client.query(
    `INSERT INTO ${table} (id, event_type, event_version, aggregate_type, aggregate_id, transport, destination, occurred_at, headers, payload)
     SELECT gen_random_uuid(), 'bench.order-placed', 1, 'order', 'order-' || (n % 1000), 'default', 'bench-p10', now(), '{}', '{"note":"pending"}'
     FROM generate_series(1, $1::int) AS n`,
    [pending],
  );
}

/**
 * Bytes from the WAL insert position: exact, for the whole server. (pg_stat_wal's record count is
 * not used: backends report it when they go idle, so another connection's earlier work shows up late.)
 */
async function rowsAndWal(client: Client, table: string): Promise<{ rows: number; walBytes: number }> {
  const { rows } = await client.query(`SELECT (SELECT count(*) FROM ${table})::float8 AS rows, pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::float8 AS "walBytes"`);
  return rows[0];
}
