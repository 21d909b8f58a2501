import { Client } from 'pg';
import { benchServices, privateSchema, suffix } from './support/env';
import { drainThroughNestApp } from './support/nest-drain';
import { createOurRelay } from './support/our-relay';
import { seedOutboxTable } from './support/seed';
import { fmt, median } from './support/stats';
import { countStreamTableReads } from './support/stream-table-reads';

/**
 * What a switch from the table mode to the WAL mode with rows pending costs the stream. The
 * publication carries the outbox table's inserts and updates, so the table relay's claims and
 * settles of the rows left from the table mode go through the slot beside the new events.
 *
 * Per round and variant: ROWS pending rows written in the table mode (before the slot exists, so
 * their inserts are not decoded), then a write-only WAL instance creates the slot and writes EVENTS
 * events (100 per transaction) while a table relay (the P1 relay) drains the rows at the same time,
 * so that both are interleaved in the WAL the slot holds; then a relaying WAL-mode app streams the
 * slot, timed from its start until the slot is confirmed past the last commit. Variants: no rows;
 * ROWS rows; ROWS rows with the publication set to `publish = 'insert'` during the drain (what the
 * stream would decode without the updates).
 *
 *   npx tsc -p test/bench/tsconfig.json && node .bench/build/test/bench/wal-switch-decode.js
 */
const ROWS = Number(process.env.WAL_SWITCH_ROWS ?? 20_000);
const EVENTS = Number(process.env.WAL_SWITCH_EVENTS ?? 20_000);
const ROUNDS = Number(process.env.WAL_SWITCH_ROUNDS ?? 3);
const PER_TRANSACTION = 100;
const counts = countStreamTableReads();

interface Variant {
  name: string;
  rows: number;
  insertOnly: boolean;
}

const VARIANTS: Variant[] = [
  { name: 'no table rows', rows: 0, insertOnly: false },
  { name: `${ROWS} table rows drained (publish = insert, update)`, rows: ROWS, insertOnly: false },
  { name: `${ROWS} table rows drained (publish = insert)`, rows: ROWS, insertOnly: true },
];

async function main(): Promise<void> {
  const services = benchServices();
  const payload = { note: 'x'.repeat(380) };
  const results = new Map<string, Array<{ rate: number; relayUs: number; postgresUs: number; walBytes: number }>>();
  for (let round = 1; round <= ROUNDS; round++) {
    for (const variant of VARIANTS) {
      const { schema, drop } = await privateSchema(services.postgresUrl, 'bench_wal_switch');
      const slotName = `${schema}_slot`;
      const admin = new Client({ connectionString: services.postgresUrl });
      await admin.connect();
      let walBytes = 0;
      try {
        // The table mode's leftovers: pending rows, written before the slot exists.
        const table = await createOurRelay({ postgresUrl: services.postgresUrl, schema, table: 'outbox_messages', brokers: services.kafkaBrokers, owner: 'switch', createTable: true });
        try {
          await seedOutboxTable(admin, schema, 'outbox_messages', `bench-wal-switch-table-${suffix()}`, { count: variant.rows, eventsPerAggregate: 4 });
          counts.batches = counts.reads = 0;
          const { seconds, cpu } = await drainThroughNestApp({
            services,
            schema,
            migrate: false,
            mode: 'wal',
            topic: `bench-wal-switch-${suffix()}`,
            slotName,
            write: async (publisher, dataSource) => {
              // The write-only instance made the publication with the table's inserts and updates.
              if (variant.insertOnly) await admin.query(`ALTER PUBLICATION "${slotName}" SET (publish = 'insert')`);
              const [{ lsn: from }] = (await admin.query(`SELECT pg_current_wal_lsn()::text AS lsn`)).rows;
              const drainTable = async () => {
                while ((await table.relay.publishBatch()).claimed > 0);
              };
              const writeEvents = async () => {
                for (let done = 0; done < EVENTS; done += PER_TRANSACTION) {
                  const events = Array.from({ length: PER_TRANSACTION }, (_, i) => ({ type: 'bench.noted', aggregateType: 'bench', aggregateId: `a${(done + i) % 1000}`, payload }));
                  await dataSource.transaction((manager) => publisher.add(manager, events));
                }
              };
              await Promise.all([drainTable(), writeEvents()]);
              walBytes = Number((await admin.query(`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::bigint AS bytes`, [from])).rows[0].bytes);
              const pending = Number((await admin.query(`SELECT count(*) AS n FROM "${schema}".outbox_messages WHERE status = 'pending'`)).rows[0].n);
              if (pending > 0) throw new Error(`${pending} table rows still pending after the table relay's drain`);
            },
          });
          const row = { rate: EVENTS / seconds, relayUs: (cpu.relay * seconds * 10_000) / EVENTS, postgresUs: (cpu.postgres * seconds * 10_000) / EVENTS, walBytes };
          results.set(variant.name, [...(results.get(variant.name) ?? []), row]);
          console.log(
            `round ${round}, ${variant.name}: ${fmt(row.rate, 0)} events/s streamed (${fmt(seconds, 2)} s); CPU per event: relay process ${fmt(row.relayUs, 0)} us, ` +
              `PostgreSQL ${fmt(row.postgresUs, 0)} us; WAL in the slot ${fmt(walBytes / 1024 / 1024, 1)} MiB; ` +
              `${counts.batches} batches, ${counts.reads} table reads`,
          );
        } finally {
          await table.close();
        }
      } finally {
        await admin.end();
        await drop();
      }
    }
  }
  console.log(`\nmedians of ${ROUNDS} rounds, ${EVENTS} events streamed:`);
  for (const [name, rows] of results) {
    console.log(
      `| ${name} | ${fmt(median(rows.map((r) => r.rate)), 0)} events/s | relay ${fmt(median(rows.map((r) => r.relayUs)), 0)} us | ` +
        `PostgreSQL ${fmt(median(rows.map((r) => r.postgresUs)), 0)} us | ${fmt(median(rows.map((r) => r.walBytes)) / 1024 / 1024, 1)} MiB |`,
    );
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
