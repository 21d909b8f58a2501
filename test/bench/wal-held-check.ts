import { benchServices, privateSchema, suffix } from './support/env';
import { drainThroughNestApp } from './support/nest-drain';
import { fmt } from './support/stats';
import { countStreamTableReads } from './support/stream-table-reads';

/**
 * What one dead row costs the WAL stream (deadLetterPolicy 'hold', the default): a dead row of an
 * aggregate that gets no new events sits in the outbox table while EVENTS events of other
 * aggregates stream (written beforehand, 100 per transaction, WAL_HELD_BATCH per batch). Counts the
 * stream's batches and its reads of the table (TableOverflow's backlog and held-set queries, by
 * wrapping them in this process), and the drain's rate and CPU.
 *
 *   npx tsc -p test/bench/tsconfig.json && node .bench/build/test/bench/wal-held-check.js
 */
const EVENTS = Number(process.env.WAL_HELD_EVENTS ?? 10_000);
const BATCH = Number(process.env.WAL_HELD_BATCH ?? 100);
const ROUNDS = Number(process.env.WAL_HELD_ROUNDS ?? 3);
const PER_TRANSACTION = 100;

const counts = countStreamTableReads();

async function main(): Promise<void> {
  const services = benchServices();
  const payload = { note: 'x'.repeat(380) };
  for (let round = 1; round <= ROUNDS; round++) {
    const { schema, drop } = await privateSchema(services.postgresUrl, 'bench_wal_held');
    counts.batches = counts.reads = 0;
    try {
      const { seconds, cpu } = await drainThroughNestApp({
        services,
        schema,
        migrate: true,
        mode: 'wal',
        topic: `bench-wal-held-${suffix()}`,
        slotName: `${schema}_slot`,
        batchSize: BATCH,
        write: async (publisher, dataSource) => {
          await dataSource.query(
            `INSERT INTO outbox_messages (id, event_type, event_version, aggregate_type, aggregate_id, destination, occurred_at, payload, status, attempts, last_error, dead_at)
             VALUES (gen_random_uuid(), 'bench.noted', 1, 'bench', 'stuck', 'bench', now(), '{}', 'dead', 10, 'refused', now())`,
          );
          for (let done = 0; done < EVENTS; done += PER_TRANSACTION) {
            const events = Array.from({ length: PER_TRANSACTION }, (_, i) => ({ type: 'bench.noted', aggregateType: 'bench', aggregateId: `a${(done + i) % 1000}`, payload }));
            await dataSource.transaction((manager) => publisher.add(manager, events));
          }
        },
      });
      console.log(
        `round ${round}: ${EVENTS} events, ${counts.batches} batches, ${counts.reads} table reads ` +
          `(${fmt((counts.reads * 1000) / EVENTS, 1)} per 1,000 events, ${fmt(counts.reads / Math.max(1, counts.batches), 2)} per batch); ` +
          `${fmt(EVENTS / seconds, 0)} msg/s; CPU relay ${fmt(cpu.relay, 0)} %, PostgreSQL ${fmt(cpu.postgres, 0)} %`,
      );
    } finally {
      await drop();
    }
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
