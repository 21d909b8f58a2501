import { Client, Pool } from 'pg';
import { PgPoolConnection, WalPositionTable } from './outbox';
import { sleep } from './env';

/**
 * What remembering the stream's position costs (issue: duplicates after a PostgreSQL restart): how
 * many saves a drain made, read from PostgreSQL's own counters for `<table>_wal_positions`, and how
 * long one save takes (the very `WalPositionTable.save` the stream runs: a short transaction with
 * synchronous_commit on, position and per-minute counts), timed back to back on one connection.
 * Saves run beside the stream, one in flight at most, so this is PostgreSQL's work per event,
 * not time the stream waits.
 */
export async function positionSaves(url: string, schema: string): Promise<number> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    // Backends report their table counters within a second of their last transaction, or at exit:
    // read until the count has stood still for over a second.
    const read = async () =>
      Number(
        (await client.query(`SELECT coalesce(n_tup_ins + n_tup_upd, 0)::int AS saves FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'outbox_messages_wal_positions'`, [schema]))
          .rows[0]?.saves ?? 0,
      );
    let last = await read();
    for (let still = 0, attempt = 0; still < 5 && attempt < 40; attempt++) {
      await sleep(250);
      const now = await read();
      still = now === last && now > 0 ? still + 1 : 0;
      last = now;
    }
    return last;
  } finally {
    await client.end();
  }
}

/** Microseconds per position save, the median of `count` saves made back to back. */
export async function microsPerPositionSave(url: string, schema: string, count = 300): Promise<number> {
  const pool = new Pool({ connectionString: url, max: 1, options: `-c search_path=${schema}` });
  pool.on('error', () => undefined);
  try {
    const connection = new PgPoolConnection(pool as never);
    const table = new WalPositionTable(connection, { tableName: 'outbox_messages', schema }, 'bench_position_cost');
    const times: number[] = [];
    for (let i = 1; i <= count; i++) {
      const started = process.hrtime.bigint();
      await table.save(BigInt(i) * 1000n, [{ transport: 'default', destination: 'bench', count: 100 }]);
      times.push(Number(process.hrtime.bigint() - started) / 1000);
    }
    return times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
  } finally {
    await pool.end();
  }
}
