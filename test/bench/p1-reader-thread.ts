import { deserialize, serialize } from 'node:v8';
import type { StreamCommit } from '../../libs/outbox/src/core/stream/stream-message';
import { decodeCommits, encodeCommits } from '../../libs/outbox/src/wal/reader-thread/reader-thread.protocol';
import { privateSchema } from './support/env';
import { drainThroughNestApp } from './support/nest-drain';
import type { BenchContext, SummaryRow } from './support/report';
import type { Backlog } from './support/seed';
import { fmt, median } from './support/stats';
import { backlogWriter } from './p1-wal';

// At least three rounds: the machine's drift between two drains is larger than the difference sought.
const MIN_ROUNDS = 3;

interface ReaderThreadVariant {
  key: string;
  walWrite: 'row' | 'message';
  kafkaClient: 'kafkajs' | 'librdkafka';
  readerThread: 'main' | 'worker';
}

const CONFIGS = [
  { walWrite: 'row', kafkaClient: 'kafkajs', label: "`wal.write: 'row'` (default), `ClientKafka`" },
  { walWrite: 'message', kafkaClient: 'librdkafka', label: "`wal.write: 'message'`, `ConfluentKafkaTransport`" },
] as const;
const VARIANTS: ReaderThreadVariant[] = CONFIGS.flatMap(({ walWrite, kafkaClient }) =>
  (['main', 'worker'] as const).map((readerThread) => ({ key: `${walWrite}-${kafkaClient}-${readerThread}`, walWrite, kafkaClient, readerThread })),
);

/**
 * P1's reader thread: the WAL stream draining the P1 backlog with the slot read and decoded on the
 * app's thread (`wal.readerThread: 'main'`, the default) and on a worker thread (`'worker'`), for
 * the default write with `ClientKafka` and for the message write with `ConfluentKafkaTransport`.
 * Rounds alternate the variants, so that the machine's drift hits each alike. Besides msg/s, the
 * share of the drain the main thread was busy (event loop utilization) says what the worker took
 * off the thread that publishes, and the CPU of the process and of PostgreSQL what it cost.
 */
export async function p1ReaderThreadDrains(context: BenchContext, backlog: Backlog): Promise<{ body: string[]; summary: SummaryRow[] }> {
  const { services, sizes } = context;
  const runs = new Map(VARIANTS.map((variant) => [variant.key, { perSecond: [] as number[], busy: [] as number[], relayCpu: [] as number[], postgresCpu: [] as number[] }]));
  const rounds = Math.max(MIN_ROUNDS, sizes.rounds);
  for (let round = 1; round <= rounds; round++) {
    for (const variant of VARIANTS) {
      const { schema, drop } = await privateSchema(services.postgresUrl, `bench_p1r_${variant.key.replaceAll('-', '_')}`);
      try {
        const { seconds, cpu, mainThreadBusy } = await drainThroughNestApp({
          services,
          schema,
          migrate: true,
          mode: 'wal',
          topic: `bench-p1-reader-${variant.key}-${schema}`,
          slotName: `${schema}_slot`,
          walWrite: variant.walWrite,
          kafkaClient: variant.kafkaClient,
          readerThread: variant.readerThread,
          write: backlogWriter(backlog),
        });
        const run = runs.get(variant.key)!;
        run.perSecond.push(backlog.count / seconds);
        run.busy.push(mainThreadBusy * 100);
        run.relayCpu.push(cpu.relay);
        run.postgresCpu.push(cpu.postgres);
        context.log(`P1 reader ${variant.key} round ${round}: ${fmt(backlog.count / seconds)} msg/s, main thread busy ${fmt(mainThreadBusy * 100, 0)} %, process ${fmt(cpu.relay, 0)} %, PostgreSQL ${fmt(cpu.postgres, 0)} %`);
      } finally {
        await drop();
      }
    }
  }
  const of = (key: string) => runs.get(key)!;
  const handOver = handOverCost();
  const body = [
    `P1's reader thread: the WAL stream draining the ${fmt(backlog.count, 0)}-event P1 backlog (written beforehand as in the WAL rows above, clock from the relaying app's start) with \`wal.readerThread: 'main'\` (the default: the replication connection, pgoutput's parsing and the records' JSON on the app's thread) and \`'worker'\` (those on a worker thread; the transports publish on the app's thread), median of ${rounds} rounds, the variants taking turns. ` +
      '"Main thread busy" is the event loop utilization of the app\'s thread over the drain (`performance.eventLoopUtilization`): the share of it the thread that publishes was working. CPU is % of one core of the 2: the process (both threads) and PostgreSQL\'s processes.',
    '',
    '| write, transport | reader thread | msg/s (runs) | main thread busy | process CPU | PostgreSQL CPU |',
    '|---|---|---|---|---|---|',
    ...VARIANTS.map((variant) => {
      const run = of(variant.key);
      const config = CONFIGS.find((c) => c.walWrite === variant.walWrite && c.kafkaClient === variant.kafkaClient)!;
      return `| ${config.label} | \`'${variant.readerThread}'\` | ${fmt(median(run.perSecond))} (${run.perSecond.map((value) => fmt(value)).join(', ')}) | ${fmt(median(run.busy), 0)} % | ${fmt(median(run.relayCpu), 0)} % | ${fmt(median(run.postgresCpu), 0)} % |`;
    }),
    '',
    `What the app's thread pays per message to take a group of 100 over (P1's payload, in this process, median of 5 passes of ${fmt(HAND_OVER_GROUPS, 0)} groups): ` +
      `the reader's JSON text read back (\`decodeCommits\`) ${fmt(handOver.json, 2)} µs; the message objects' structured clone read back (what \`postMessage\` of the objects would cost, \`v8.deserialize\`) ${fmt(handOver.clone, 2)} µs.`,
  ];
  const summary: SummaryRow[] = CONFIGS.map(({ walWrite, kafkaClient, label }) => {
    const main = of(`${walWrite}-${kafkaClient}-main`);
    const worker = of(`${walWrite}-${kafkaClient}-worker`);
    return {
      bench: 'P1',
      figure: `ours (WAL), ${label}: wal.readerThread 'worker' / 'main', msg/s; main thread busy, 'main' → 'worker'`,
      value: `${fmt(median(worker.perSecond) / median(main.perSecond), 2)}×; ${fmt(median(main.busy), 0)} % → ${fmt(median(worker.busy), 0)} %`,
    };
  });
  return { body, summary };
}

const HAND_OVER_GROUPS = 2_000;

/** µs per message to read back one group of 100 messages: the JSON text the reader's thread sends, and a structured clone of the objects. */
function handOverCost(): { json: number; clone: number } {
  const group = (): StreamCommit[] => [
    {
      lsn: 123_456_789n,
      xid: 7,
      messages: Array.from({ length: 100 }, (_, index) => ({
        id: `0b5d4a3e-9c1f-4a53-9d7e-${String(index).padStart(12, '0')}`,
        type: 'bench.event',
        version: 1,
        aggregateType: 'bench',
        aggregateId: `a-${index}`,
        transport: 'default',
        destination: 'bench',
        occurredAt: '2026-11-29T06:00:00.000Z',
        headers: {},
        payloadJson: JSON.stringify({ note: 'x'.repeat(380), index }),
        commit: 123_456_789n,
        index,
      })),
    },
  ];
  const text = encodeCommits(group());
  const cloned = serialize(group());
  const perMessage = (work: () => unknown): number => {
    const passes: number[] = [];
    // One pass more than reported: the first warms the code up.
    for (let pass = 0; pass <= 5; pass++) {
      const started = process.hrtime.bigint();
      for (let n = 0; n < HAND_OVER_GROUPS; n++) work();
      passes.push(Number(process.hrtime.bigint() - started) / 1_000 / HAND_OVER_GROUPS / 100);
    }
    return median(passes.slice(1));
  };
  return { json: perMessage(() => decodeCommits(text)), clone: perMessage(() => deserialize(cloned)) };
}
