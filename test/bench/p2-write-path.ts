import type { DataSource } from 'typeorm';
import { BenchParcel } from './support/entities';
import { ServerCpu, processCpuMs, WaitSampler } from './support/cpu';
import { privateSchema, suffix, withClient } from './support/env';
import { dropWalSlot } from './support/outbox';
import { startBenchApp } from './support/nest-apps';
import { type BenchContext, type Section, table } from './support/report';
import { distribution, fmt, fmtRatio } from './support/stats';

const WRITERS = 8;
const BLOCK = 100;

interface Variant {
  name: string;
  dataSource: DataSource;
  latencies: number[];
  /** Save latencies during the concurrent phase. */
  concurrentLatencies: number[];
  saves: number;
  seconds: number;
  /** CPU milliseconds used during the concurrent phase by this (writer) process and by PostgreSQL. */
  writerCpuMs: number;
  serverCpuMs: number;
}

/**
 * P2: the cost the outbox adds to a save. The same entity (`BenchParcel`, one recorded event) is
 * saved with `dataSource.transaction((m) => m.save(parcel))` on Nest contexts with OutboxModule
 * (write-only instance: `relay: false`, other options default), with it and `notifications: false`
 * (to show what the commit-time NOTIFY costs), with it and `preparedStatements: false` (to show what the
 * named INSERT saves), with it and `writeWithCommit: false` (to show what sending the INSERT with the
 * COMMIT saves), with it in the WAL mode (`delivery: 'wal'`, `wal.write: 'message'`: the event
 * written as a logical decoding message, no row; `wal.write: 'row'`, the default: a row the stream
 * owns, inserted without a NOTIFY), and without it, each on a schema of its own.
 * Variants alternate in blocks so that load from elsewhere on the machine hits all alike.
 */
export async function p2WritePath(context: BenchContext): Promise<Section> {
  const { services, sizes } = context;
  const topic = `bench-p2-${suffix()}`;
  const withSchema = await privateSchema(services.postgresUrl, 'bench_p2_outbox');
  const quietSchema = await privateSchema(services.postgresUrl, 'bench_p2_nonotify');
  const unnamedSchema = await privateSchema(services.postgresUrl, 'bench_p2_unnamed');
  const apartSchema = await privateSchema(services.postgresUrl, 'bench_p2_apart');
  const walSchema = await privateSchema(services.postgresUrl, 'bench_p2_wal');
  const walRowSchema = await privateSchema(services.postgresUrl, 'bench_p2_walrow');
  const withoutSchema = await privateSchema(services.postgresUrl, 'bench_p2_plain');
  const withApp = await startBenchApp({ postgresUrl: services.postgresUrl, schema: withSchema.schema, migrate: true, outbox: { relay: false, resolveTopic: () => topic } });
  const quietApp = await startBenchApp({
    postgresUrl: services.postgresUrl,
    schema: quietSchema.schema,
    migrate: true,
    outbox: { relay: false, resolveTopic: () => topic, notifications: false },
  });
  const unnamedApp = await startBenchApp({
    postgresUrl: services.postgresUrl,
    schema: unnamedSchema.schema,
    migrate: true,
    outbox: { relay: false, resolveTopic: () => topic, preparedStatements: false },
  });
  const apartApp = await startBenchApp({
    postgresUrl: services.postgresUrl,
    schema: apartSchema.schema,
    migrate: true,
    outbox: { relay: false, resolveTopic: () => topic, writeWithCommit: false },
  });
  // Write-only like the others: the slot is created at init and holds what is written until it is dropped below.
  const slotName = `${walSchema.schema}_slot`;
  const walApp = await startBenchApp({
    postgresUrl: services.postgresUrl,
    schema: walSchema.schema,
    migrate: true,
    outbox: { relay: false, resolveTopic: () => topic, delivery: 'wal', wal: { slotName, write: 'message' } },
  });
  // A writer of rows needs no slot: its rows wait in the table for whoever relays (none here).
  const walRowApp = await startBenchApp({
    postgresUrl: services.postgresUrl,
    schema: walRowSchema.schema,
    migrate: true,
    outbox: { relay: false, resolveTopic: () => topic, delivery: 'wal', wal: { slotName: `${walRowSchema.schema}_slot`, write: 'row' } },
  });
  const withoutApp = await startBenchApp({ postgresUrl: services.postgresUrl, schema: withoutSchema.schema, migrate: true, withoutOutbox: true });
  const outbox: Variant = { name: 'with the outbox module', dataSource: withApp.dataSource, latencies: [], concurrentLatencies: [], saves: 0, seconds: 0, writerCpuMs: 0, serverCpuMs: 0 };
  const quiet: Variant = { name: 'with it, notifications off', dataSource: quietApp.dataSource, latencies: [], concurrentLatencies: [], saves: 0, seconds: 0, writerCpuMs: 0, serverCpuMs: 0 };
  const unnamed: Variant = { name: 'with it, INSERT unnamed', dataSource: unnamedApp.dataSource, latencies: [], concurrentLatencies: [], saves: 0, seconds: 0, writerCpuMs: 0, serverCpuMs: 0 };
  const apart: Variant = { name: 'with it, INSERT before the COMMIT', dataSource: apartApp.dataSource, latencies: [], concurrentLatencies: [], saves: 0, seconds: 0, writerCpuMs: 0, serverCpuMs: 0 };
  const wal: Variant = { name: 'with it, WAL mode (message)', dataSource: walApp.dataSource, latencies: [], concurrentLatencies: [], saves: 0, seconds: 0, writerCpuMs: 0, serverCpuMs: 0 };
  const walRow: Variant = { name: 'with it, WAL mode (row)', dataSource: walRowApp.dataSource, latencies: [], concurrentLatencies: [], saves: 0, seconds: 0, writerCpuMs: 0, serverCpuMs: 0 };
  const plain: Variant = { name: 'without it', dataSource: withoutApp.dataSource, latencies: [], concurrentLatencies: [], saves: 0, seconds: 0, writerCpuMs: 0, serverCpuMs: 0 };
  const variants = [outbox, quiet, unnamed, apart, wal, walRow, plain];
  let rowsWritten = 0;
  let savesWithOutbox = 0;
  let walRows = 0;
  let walSaves = 0;
  let walRowRows = 0;
  let walRowSaves = 0;
  let waits!: WaitSampler;
  try {
    // Warm-up: connections, prepared metadata, JIT.
    for (const variant of variants) for (let i = 0; i < BLOCK; i++) await save(variant.dataSource, i);

    for (let done = 0; done < sizes.sequentialSaves; done += BLOCK) {
      for (const variant of variants) {
        for (let i = 0; i < BLOCK; i++) {
          const started = performance.now();
          await save(variant.dataSource, done + i);
          variant.latencies.push(performance.now() - started);
        }
      }
    }
    context.log(`P2 sequential: ${outbox.latencies.length} saves per variant`);

    const serverCpu = await withClient(services.postgresUrl, (client) => ServerCpu.of(client));
    waits = await WaitSampler.connect(services.postgresUrl);
    const slice = (sizes.concurrentSeconds * 1000) / 2;
    for (let round = 0; round < 2; round++) {
      for (const variant of variants) {
        const cpuBefore = { writer: processCpuMs(), server: serverCpu?.snapshot() };
        waits.start(variant.name);
        const started = performance.now();
        const until = started + slice;
        const counts = await Promise.all(
          Array.from({ length: WRITERS }, async (_, writer) => {
            let count = 0;
            while (performance.now() < until) {
              const saveStarted = performance.now();
              await save(variant.dataSource, writer * 1_000_000 + count++);
              variant.concurrentLatencies.push(performance.now() - saveStarted);
            }
            return count;
          }),
        );
        variant.saves += counts.reduce((sum, count) => sum + count, 0);
        variant.seconds += (performance.now() - started) / 1000;
        await waits.stop();
        variant.writerCpuMs += processCpuMs() - cpuBefore.writer;
        variant.serverCpuMs += serverCpu && cpuBefore.server ? serverCpu.millisecondsSince(cpuBefore.server) : Number.NaN;
      }
    }
    context.log(`P2 concurrent: ${fmt(outbox.saves / outbox.seconds)} vs ${fmt(plain.saves / plain.seconds)} saves/s`);
    rowsWritten = Number((await outbox.dataSource.query(`SELECT count(*) AS n FROM outbox_messages`))[0].n);
    savesWithOutbox = Number((await outbox.dataSource.query(`SELECT count(*) AS n FROM bench_parcels`))[0].n);
    walRows = Number((await wal.dataSource.query(`SELECT count(*) AS n FROM outbox_messages`))[0].n);
    walSaves = Number((await wal.dataSource.query(`SELECT count(*) AS n FROM bench_parcels`))[0].n);
    walRowRows = Number((await walRow.dataSource.query(`SELECT count(*) AS n FROM outbox_messages WHERE lease_expires_at = 'infinity'`))[0].n);
    walRowSaves = Number((await walRow.dataSource.query(`SELECT count(*) AS n FROM bench_parcels`))[0].n);
  } finally {
    await waits?.close();
    for (const app of [withApp, quietApp, unnamedApp, apartApp, walApp, walRowApp, withoutApp]) await app.app.close();
    await withClient(services.postgresUrl, (client) => dropWalSlot(async (sql, params) => (await client.query(sql, params)).rows, { slotName, publicationName: slotName }));
    for (const schema of [withSchema, quietSchema, unnamedSchema, apartSchema, walSchema, walRowSchema, withoutSchema]) await schema.drop();
  }
  if (rowsWritten !== savesWithOutbox) throw new Error(`the outbox holds ${rowsWritten} rows for ${savesWithOutbox} saved parcels`);
  // In the WAL mode an undelayed event is a logical message, never a row.
  if (walRows !== 0) throw new Error(`the WAL mode (message) wrote ${walRows} outbox rows for ${walSaves} saved parcels`);
  if (walRowRows !== walRowSaves) throw new Error(`the WAL mode (row) wrote ${walRowRows} stream-owned rows for ${walRowSaves} saved parcels`);

  const a = distribution(outbox.latencies);
  const b = distribution(plain.latencies);
  const c = distribution(quiet.latencies);
  const d = distribution(unnamed.latencies);
  const e = distribution(apart.latencies);
  const throughputApart = apart.saves / apart.seconds;
  const w = distribution(wal.latencies);
  const r = distribution(walRow.latencies);
  const throughputWalRow = walRow.saves / walRow.seconds;
  const throughputWal = wal.saves / wal.seconds;
  const concurrentP50 = (variant: Variant) => distribution(variant.concurrentLatencies).p50;
  const walConcurrentRatio = concurrentP50(wal) / concurrentP50(plain);
  const walThroughputCost = plain.saves / plain.seconds / throughputWal;
  const throughputUnnamed = unnamed.saves / unnamed.seconds;
  const throughputQuiet = quiet.saves / quiet.seconds;
  const latencyRatio = a.p50 / b.p50;
  const throughputWith = outbox.saves / outbox.seconds;
  const throughputWithout = plain.saves / plain.seconds;
  const throughputRatio = throughputWithout / throughputWith;
  return {
    id: 'P2',
    title: 'P2 — write-path overhead: `transaction(m => m.save(parcel))` with one recorded event',
    body: [
      ...table(
        ['variant', 'sequential p50 ms', 'p99 ms', 'max ms', `${WRITERS} writers: saves/s`, `${WRITERS} writers: p50 ms`, 'CPU µs per save: writer / PostgreSQL', 'CPU busy (of 2 cores)'],
        [
          ['with OutboxModule (`relay: false`, defaults otherwise)', fmt(a.p50, 2), fmt(a.p99, 2), fmt(a.max, 2), fmt(throughputWith), fmt(concurrentP50(outbox), 2), ...cpu(outbox)],
          ['with OutboxModule, `notifications: false` (for reference)', fmt(c.p50, 2), fmt(c.p99, 2), fmt(c.max, 2), fmt(throughputQuiet), fmt(concurrentP50(quiet), 2), ...cpu(quiet)],
          ['with OutboxModule, `preparedStatements: false` (for reference)', fmt(d.p50, 2), fmt(d.p99, 2), fmt(d.max, 2), fmt(throughputUnnamed), fmt(concurrentP50(unnamed), 2), ...cpu(unnamed)],
          ['with OutboxModule, `writeWithCommit: false` (for reference: the INSERT its own round trip)', fmt(e.p50, 2), fmt(e.p99, 2), fmt(e.max, 2), fmt(throughputApart), fmt(concurrentP50(apart), 2), ...cpu(apart)],
          ["with OutboxModule, `delivery: 'wal'`, `wal.write: 'message'` (a logical message, no row)", fmt(w.p50, 2), fmt(w.p99, 2), fmt(w.max, 2), fmt(throughputWal), fmt(concurrentP50(wal), 2), ...cpu(wal)],
          ["with OutboxModule, `delivery: 'wal'`, `wal.write: 'row'` (the default: a stream-owned row)", fmt(r.p50, 2), fmt(r.p99, 2), fmt(r.max, 2), fmt(throughputWalRow), fmt(concurrentP50(walRow), 2), ...cpu(walRow)],
          ['without the outbox module', fmt(b.p50, 2), fmt(b.p99, 2), fmt(b.max, 2), fmt(throughputWithout), fmt(concurrentP50(plain), 2), ...cpu(plain)],
          ['ratio with (defaults) / without', fmtRatio(latencyRatio), fmtRatio(a.p99 / b.p99), '', `${fmtRatio(throughputWith / throughputWithout)} (cost ${fmtRatio(throughputRatio)})`, fmtRatio(concurrentP50(outbox) / concurrentP50(plain)), '', ''],
          ['ratio with (`notifications: false`) / without', fmtRatio(c.p50 / b.p50), fmtRatio(c.p99 / b.p99), '', `${fmtRatio(throughputQuiet / throughputWithout)} (cost ${fmtRatio(throughputWithout / throughputQuiet)})`, fmtRatio(concurrentP50(quiet) / concurrentP50(plain)), '', ''],
          ['ratio with (`preparedStatements: false`) / without', fmtRatio(d.p50 / b.p50), fmtRatio(d.p99 / b.p99), '', `${fmtRatio(throughputUnnamed / throughputWithout)} (cost ${fmtRatio(throughputWithout / throughputUnnamed)})`, fmtRatio(concurrentP50(unnamed) / concurrentP50(plain)), '', ''],
          ['ratio with (`writeWithCommit: false`) / without', fmtRatio(e.p50 / b.p50), fmtRatio(e.p99 / b.p99), '', `${fmtRatio(throughputApart / throughputWithout)} (cost ${fmtRatio(throughputWithout / throughputApart)})`, fmtRatio(concurrentP50(apart) / concurrentP50(plain)), '', ''],
          ["ratio WAL mode (message) / without", fmtRatio(w.p50 / b.p50), fmtRatio(w.p99 / b.p99), '', `${fmtRatio(throughputWal / throughputWithout)} (cost ${fmtRatio(walThroughputCost)})`, fmtRatio(walConcurrentRatio), '', ''],
          ["ratio WAL mode (row) / without", fmtRatio(r.p50 / b.p50), fmtRatio(r.p99 / b.p99), '', `${fmtRatio(throughputWalRow / throughputWithout)} (cost ${fmtRatio(throughputWithout / throughputWalRow)})`, fmtRatio(concurrentP50(walRow) / concurrentP50(plain)), '', ''],
        ],
      ),
      '',
      `${a.count} sequential saves per variant in alternating blocks of ${BLOCK} (after ${BLOCK} warm-up saves each), then ${WRITERS} concurrent writers ` +
        `for 2 × ${fmt(sizes.concurrentSeconds / 2)} s per variant, alternating. All contexts use a pool of 10 connections and their own schema. ` +
        `The outbox wrote ${fmt(rowsWritten, 0)} rows for ${fmt(savesWithOutbox, 0)} saves. Each save with the outbox is one more INSERT in the same transaction, sent with the COMMIT in one network write (\`writeWithCommit\`, the default; the reference variant sends it on its own, a round trip before the COMMIT); with \`notifications\` on (the default) that INSERT also carries the \`pg_notify\`, and with \`preparedStatements\` on (the default) it is a named statement, parsed and planned once per connection. ` +
        `In the WAL mode with \`wal.write: 'message'\` the save instead calls \`pg_logical_emit_message(true, …)\` in the same transaction (its slot created at init, nothing streaming it; it wrote ${walRows} outbox rows for ${fmt(walSaves, 0)} saves); ` +
        `with \`wal.write: 'row'\` it inserts a row leased to the stream, with the aggregate's lock and no NOTIFY (${fmt(walRowRows, 0)} rows for ${fmt(walRowSaves, 0)} saves; the stream's delete of them after the broker's acknowledgement is P1's). ` +
        `What the busy backends were doing during the 8-writer phase (pg_stat_activity sampled every ${WaitSampler.EVERY_MS} ms, share of samples): ` +
        variants.map((variant) => `${variant.name}: ${waits.describe(variant.name)}`).join('; ') +
        '. ' +
        `CPU columns: the 8-writer phase's CPU time of this process (\`process.cpuUsage\`) and of the PostgreSQL server's processes (/proc), per save; busy is their sum over wall time and 2 cores (the Kafka broker is idle here).`,
    ],
    summary: [
      { bench: 'P2', figure: 'median save latency, with / without outbox', value: `${fmt(a.p50, 2)} / ${fmt(b.p50, 2)} ms = ${fmtRatio(latencyRatio)}`, aim: '≤ 1.25×', met: latencyRatio <= 1.25 },
      // The aims are issue 28's: ≤ 1.25× for the table mode, ≤ 1.1× for the WAL mode, both figures.
      {
        bench: 'P2',
        figure: `throughput, ${WRITERS} writers, without / with outbox`,
        value: `${fmt(throughputWithout)} / ${fmt(throughputWith)} saves/s = ${fmtRatio(throughputRatio)}`,
        aim: '≤ 1.25×',
        met: throughputRatio <= 1.25,
      },
      {
        bench: 'P2',
        figure: "WAL mode, wal.write 'message': median save latency, with / without outbox",
        value: `${fmt(w.p50, 2)} / ${fmt(b.p50, 2)} ms = ${fmtRatio(w.p50 / b.p50)}`,
        aim: '≤ 1.1×',
        met: w.p50 / b.p50 <= 1.1,
      },
      {
        bench: 'P2',
        figure: `WAL mode, wal.write 'message': median save latency, ${WRITERS} writers, with / without outbox`,
        value: `${fmt(concurrentP50(wal), 2)} / ${fmt(concurrentP50(plain), 2)} ms = ${fmtRatio(walConcurrentRatio)}`,
      },
      {
        bench: 'P2',
        figure: `WAL mode, wal.write 'message': throughput, ${WRITERS} writers, without / with outbox`,
        value: `${fmt(throughputWithout)} / ${fmt(throughputWal)} saves/s = ${fmtRatio(walThroughputCost)}`,
        aim: '≤ 1.1×',
        met: walThroughputCost <= 1.1,
      },
      {
        bench: 'P2',
        figure: "WAL mode, wal.write 'row' (the default): median save latency; throughput cost, 8 writers",
        value: `${fmtRatio(r.p50 / b.p50)}; ${fmtRatio(throughputWithout / throughputWalRow)}`,
      },
      {
        bench: 'P2',
        figure: 'same two with `notifications: false` (reference)',
        value: `latency ${fmtRatio(c.p50 / b.p50)}, throughput cost ${fmtRatio(throughputWithout / throughputQuiet)}`,
      },
      {
        bench: 'P2',
        figure: 'same two with `writeWithCommit: false` (reference: the INSERT its own round trip)',
        value: `latency ${fmtRatio(e.p50 / b.p50)}, throughput cost ${fmtRatio(throughputWithout / throughputApart)}`,
      },
      {
        bench: 'P2',
        figure: 'same two with `preparedStatements: false` (reference)',
        value: `latency ${fmtRatio(d.p50 / b.p50)}, throughput cost ${fmtRatio(throughputWithout / throughputUnnamed)}`,
      },
    ],
  };
}

/** CPU per save in the concurrent phase (this process; the PostgreSQL server's processes), and how busy both kept the machine. */
function cpu(variant: Variant): string[] {
  const perSave = (ms: number) => fmt((ms * 1000) / variant.saves, 0);
  const busy = (variant.writerCpuMs + variant.serverCpuMs) / (variant.seconds * 1000);
  return [`${perSave(variant.writerCpuMs)} / ${perSave(variant.serverCpuMs)}`, Number.isNaN(busy) ? 'n/a' : `${fmt(busy * 50, 0)} %`];
}

function save(dataSource: DataSource, i: number): Promise<BenchParcel> {
  return dataSource.transaction((manager) => manager.save(BenchParcel.register(`parcel-${i}`, 100 + (i % 5000))));
}
