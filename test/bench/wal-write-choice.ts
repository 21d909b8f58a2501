import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { NewOutboxMessage } from '../../libs/outbox/src/core/outbox-message';
import { tableDialectFor } from '../../libs/outbox/src/typeorm/outbox-sql.factory';
import { distribution, fmt } from './support/stats';
import { benchServices, suffix } from './support/env';

/**
 * What the WAL delivery mode writes in the saving transaction, measured side by side in one run:
 * the same save (one ~500-byte business row) alone, with the table mode's outbox INSERT (its
 * aggregate lock included), with an outbox row inserted and deleted again (so that the row reaches
 * the WAL but not the table), and with `pg_logical_emit_message(true, …)`. Raw `pg` clients, so the
 * figures are the SQL's cost and not the ORM's. Variants alternate in blocks, 1 writer then 8.
 *
 *   npx tsc -p test/bench/tsconfig.json && node .bench/build/test/bench/wal-write-choice.js
 */
const BLOCK = 100;
const SEQUENTIAL_SAVES = Number(process.env.WAL_CHOICE_SAVES ?? 2000);
const CONCURRENT_SECONDS = Number(process.env.WAL_CHOICE_SECONDS ?? 4);
const WRITERS = 8;

type Variant = { name: string; save: (client: Client, n: number) => Promise<void> };

async function main(): Promise<void> {
  const { postgresUrl } = benchServices();
  const schema = `wal_choice_${suffix()}`;
  const admin = new Client({ connectionString: postgresUrl });
  await admin.connect();
  const dialect = tableDialectFor('postgres', { tableName: 'outbox_messages', schema });
  await admin.query(`CREATE SCHEMA ${schema}`);
  for (const sql of dialect.createTable()) await admin.query(sql);
  await admin.query(`CREATE TABLE ${schema}.parcels (id uuid PRIMARY KEY, body text NOT NULL)`);
  const clients = await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      const client = new Client({ connectionString: postgresUrl });
      await client.connect();
      return client;
    }),
  );
  const body = 'x'.repeat(500);
  const parcel = (client: Client) => client.query(`INSERT INTO ${schema}.parcels (id, body) VALUES ($1, $2)`, [randomUUID(), body]);
  const message = (n: number): NewOutboxMessage => ({
    id: randomUUID(),
    type: 'parcel.shipped',
    version: 1,
    aggregateType: 'Parcel',
    aggregateId: `p-${n}`,
    transport: 'default',
    destination: 'parcels',
    occurredAt: new Date(),
    headers: {},
    payloadJson: JSON.stringify({ id: n, body: body.slice(0, 400) }),
  });
  const inTransaction = async (client: Client, work: () => Promise<unknown>) => {
    await client.query('BEGIN');
    await work();
    await client.query('COMMIT');
  };
  const variants: Variant[] = [
    { name: 'save alone', save: (client) => inTransaction(client, () => parcel(client)) },
    {
      name: 'table mode: outbox INSERT',
      save: (client, n) =>
        inTransaction(client, async () => {
          await parcel(client);
          const { sql, params } = dialect.insert([message(n)], { lockKeys: [`Parcel:p-${n}`] });
          await client.query(sql, params);
        }),
    },
    {
      name: 'row INSERT + DELETE',
      save: (client, n) =>
        inTransaction(client, async () => {
          await parcel(client);
          const { sql, params } = dialect.insert([message(n)]);
          await client.query(`WITH i AS (${sql} RETURNING position) DELETE FROM ${schema}.outbox_messages m USING i WHERE m.position = i.position`, params);
        }),
    },
    {
      name: 'pg_logical_emit_message',
      save: (client, n) =>
        inTransaction(client, async () => {
          await parcel(client);
          await client.query(`SELECT pg_logical_emit_message(true, $1, $2)`, ['nest-outbox', JSON.stringify(message(n))]);
        }),
    },
  ];
  const sequential = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  const concurrent = new Map<string, { latencies: number[]; saves: number; seconds: number }>(variants.map((v) => [v.name, { latencies: [], saves: 0, seconds: 0 }]));
  try {
    for (const variant of variants) for (let i = 0; i < BLOCK; i++) await variant.save(clients[0], i);
    for (let done = 0; done < SEQUENTIAL_SAVES; done += BLOCK) {
      for (const variant of variants) {
        for (let i = 0; i < BLOCK; i++) {
          const started = performance.now();
          await variant.save(clients[0], done + i);
          sequential.get(variant.name)!.push(performance.now() - started);
        }
      }
    }
    // Two rounds per variant, each half the time, so that a disturbance hits all alike.
    for (let round = 0; round < 2; round++) {
      for (const variant of variants) {
        const figures = concurrent.get(variant.name)!;
        const until = performance.now() + (CONCURRENT_SECONDS * 1000) / 2;
        const started = performance.now();
        await Promise.all(
          clients.map(async (client, writer) => {
            for (let n = 0; performance.now() < until; n++) {
              const t = performance.now();
              await variant.save(client, writer * 1_000_000 + n);
              figures.latencies.push(performance.now() - t);
              figures.saves++;
            }
          }),
        );
        figures.seconds += (performance.now() - started) / 1000;
      }
    }
    const wal = await admin.query(`SELECT setting FROM pg_settings WHERE name IN ('wal_level', 'synchronous_commit', 'fsync') ORDER BY name`);
    console.log(`PostgreSQL fsync/synchronous_commit/wal_level: ${wal.rows.map((r: { setting: string }) => r.setting).join('/')}`);
    console.log('| variant | median save, 1 writer (ms) | × alone | median save, 8 writers (ms) | × alone | saves/s, 8 writers |');
    console.log('|---|---|---|---|---|---|');
    const alone1 = distribution(sequential.get('save alone')!).p50;
    const alone8 = distribution(concurrent.get('save alone')!.latencies).p50;
    for (const variant of variants) {
      const one = distribution(sequential.get(variant.name)!).p50;
      const eight = concurrent.get(variant.name)!;
      const p50 = distribution(eight.latencies).p50;
      console.log(
        `| ${variant.name} | ${fmt(one, 3)} | ${fmt(one / alone1, 2)} | ${fmt(p50, 3)} | ${fmt(p50 / alone8, 2)} | ${fmt(eight.saves / eight.seconds, 0)} |`,
      );
    }
  } finally {
    for (const client of clients) await client.end();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
