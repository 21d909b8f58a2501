import 'reflect-metadata';
import { BenchParcel } from './support/entities';
import { benchServices, privateSchema, withClient } from './support/env';
import { startBenchApp } from './support/nest-apps';
import { dropWalSlot } from './support/outbox';
import { fmt } from './support/stats';

/**
 * P2's save alone, in one mode, for a CPU profile of the writer: `SAVE_MODE=wal` (default),
 * `table` or `none` (no outbox module); 500 warm-up saves, then SAVES timed, by WRITERS concurrent
 * writers (default 1: sequential; P2's concurrent phase uses 8).
 *
 *   npx tsc -p test/bench/tsconfig.json && SAVE_MODE=wal node --cpu-prof --cpu-prof-dir=/tmp/prof .bench/build/test/bench/save-profile.js
 */
const SAVES = Number(process.env.SAVES ?? 4_000);
const WRITERS = Number(process.env.WRITERS ?? 1);

async function main(): Promise<void> {
  const { postgresUrl } = benchServices();
  const mode = process.env.SAVE_MODE ?? 'wal';
  const { schema, drop } = await privateSchema(postgresUrl, 'bench_save_profile');
  const slotName = `${schema}_slot`;
  const { app, dataSource } = await startBenchApp({
    postgresUrl,
    schema,
    migrate: true,
    withoutOutbox: mode === 'none',
    outbox: { relay: false, resolveTopic: () => 'bench-save-profile', delivery: mode === 'wal' ? 'wal' : 'table', wal: { slotName } },
  });
  const save = (i: number) => dataSource.transaction((manager) => manager.save(BenchParcel.register(`parcel-${i}`, 100 + (i % 5000))));
  try {
    for (let i = 0; i < 500; i++) await save(i);
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    let next = 0;
    const writer = async () => {
      while (next < SAVES) await save(1_000 + next++);
    };
    await Promise.all(Array.from({ length: WRITERS }, writer));
    const cpu = process.cpuUsage(cpuBefore);
    const perSave = (performance.now() - started) / SAVES;
    console.log(`${mode}: ${fmt(perSave, 3)} ms per save, ${fmt((cpu.user + cpu.system) / SAVES, 0)} µs CPU per save (${SAVES} saves, ${WRITERS} writer(s))`);
  } finally {
    await app.close();
    if (mode === 'wal') await withClient(postgresUrl, (client) => dropWalSlot(async (sql, params) => (await client.query(sql, params)).rows, { slotName, publicationName: slotName }));
    await drop();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
