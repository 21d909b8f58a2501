import { Client } from 'pg';
import { Worker } from './support/child';
import { benchServices, privateSchema, sleep, suffix, waitUntil, wallNow } from './support/env';
import { startBenchApp } from './support/nest-apps';
import { dropWalSlot } from './support/outbox';
import { writeAtRate } from './p3-latency';
import { type BenchContext, QUICK, type SummaryRow } from './support/report';
import { fmt, median } from './support/stats';

const ORDERS_PER_SECOND = 200;
const SECONDS = 10;
const KILL_AFTER_MS = 3_000;
const TAKEOVER_BAR_S = 10;
const FIRST_PUBLISH_BAR_S = 0.25;

export interface TakeoverRun {
  /** SIGKILL → the slot streamed again by the other instance (`pg_replication_slots.active_pid` a new pid). */
  slotSeconds: number;
  /** SIGKILL → the standby's first publish the broker acknowledged (its stream's count rises from 0). */
  firstPublishSeconds: number;
  /** The longest time the consumer received nothing, from the kill on (orders arrive every 5 ms otherwise). */
  gapSeconds: number;
  /** The slowest commit → consumer of the orders committed after the kill. */
  worstLatencySeconds: number;
  orders: number;
  lost: number;
  duplicates: number;
}

/**
 * P4's WAL row: takeover after a crash. Two instances of the same Nest app (`delivery: 'wal'`,
 * one slot) in processes of their own; one streams, the other waits for the slot. While a writer
 * saves orders at a steady rate, the streaming instance is SIGKILLed; the run measures how long
 * the slot goes unstreamed and how long orders committed after the kill wait, and counts orders
 * lost (must be 0) and delivered twice (the replay from the last confirmed commit).
 */
export async function walTakeoverRuns(context: BenchContext, runs: number): Promise<{ runs: TakeoverRun[]; lines: string[]; summary: SummaryRow[] }> {
  const results: TakeoverRun[] = [];
  for (let run = 1; run <= runs; run++) {
    results.push(await takeover(context));
    const last = results.at(-1)!;
    context.log(`P4 WAL takeover ${run}: slot ${fmt(last.slotSeconds, 3)} s, first acknowledged publish ${fmt(last.firstPublishSeconds, 3)} s, delivery gap ${fmt(last.gapSeconds, 2)} s, lost ${last.lost}, duplicates ${last.duplicates}`);
  }
  const slot = results.map((r) => r.slotSeconds);
  const firstPublish = results.map((r) => r.firstPublishSeconds);
  const gaps = results.map((r) => r.gapSeconds);
  const lost = results.reduce((sum, r) => sum + r.lost, 0);
  const lines = [
    `| run | SIGKILL → slot streamed again (s) | SIGKILL → the standby's first acknowledged publish (s) | longest time without a delivery after the kill (s) | worst commit → consumer of the orders committed after the kill (s) | orders | lost | delivered twice |`,
    '|---|---|---|---|---|---|---|---|',
    ...results.map((r, i) => `| ${i + 1} | ${fmt(r.slotSeconds, 3)} | ${fmt(r.firstPublishSeconds, 3)} | ${fmt(r.gapSeconds, 2)} | ${fmt(r.worstLatencySeconds, 2)} | ${fmt(r.orders, 0)} | ${r.lost} | ${r.duplicates} |`),
    '',
    `Two instances of the Nest app (\`delivery: 'wal'\`, one slot, Kafka client with \`acks: -1\`), each a forked process; the writer (this process, \`relay: false\`) saves ` +
      `${ORDERS_PER_SECOND} orders/s for ${SECONDS} s and the instance that streams (the one whose stream published the warm-up orders) is SIGKILLed ${KILL_AFTER_MS / 1000} s in. ` +
      'The standby waits for the slot’s stream lock (a session advisory lock the streaming instance holds), which PostgreSQL grants it when the killed process’s connection drops; its Kafka producer is connected at start. ' +
      'A kafkajs consumer in its own process counts every order (lost = committed and never delivered; delivered twice = replayed from the last confirmed commit).',
  ];
  const summary: SummaryRow[] = [
    {
      bench: 'P4',
      figure: `WAL takeover after SIGKILL, median / max of ${runs} (slot streamed again; longest time without a delivery)`,
      value: `${fmt(median(slot), 2)} / ${fmt(Math.max(...slot), 2)} s; ${fmt(median(gaps), 2)} / ${fmt(Math.max(...gaps), 2)} s`,
      aim: `≤ ${TAKEOVER_BAR_S} s`,
      met: Math.max(...gaps, ...slot) <= TAKEOVER_BAR_S,
    },
    {
      bench: 'P4',
      figure: `WAL takeover: SIGKILL → the standby's first acknowledged publish, median / max of ${runs}`,
      value: `${fmt(median(firstPublish) * 1000, 0)} / ${fmt(Math.max(...firstPublish) * 1000, 0)} ms`,
      aim: `median ≤ ${FIRST_PUBLISH_BAR_S * 1000} ms`,
      met: median(firstPublish) <= FIRST_PUBLISH_BAR_S,
    },
    { bench: 'P4', figure: 'WAL takeover: orders lost (all runs)', value: String(lost), aim: '0', met: lost === 0 },
  ];
  return { runs: results, lines, summary };
}

async function takeover(context: BenchContext): Promise<TakeoverRun> {
  const { services } = context;
  const { schema, drop } = await privateSchema(services.postgresUrl, 'bench_p4_wal');
  const topic = `bench-p4-wal-${suffix()}`;
  const slotName = `${schema}_slot`;
  const arrivals = new Map<string, number[]>();
  const consumer = new Worker('consumer-worker', { brokers: services.kafkaBrokers, topic, mode: 'latency' });
  consumer.listeners.push((message) => {
    if (message.type !== 'received') return;
    for (const [key, at] of message.items as Array<[string, number]>) arrivals.set(key, [...(arrivals.get(key) ?? []), at]);
  });
  const admin = new Client({ connectionString: services.postgresUrl });
  await admin.connect();
  const instances: Worker[] = [];
  let writer: Awaited<ReturnType<typeof startBenchApp>> | undefined;
  try {
    writer = await startBenchApp({ postgresUrl: services.postgresUrl, schema, migrate: true, outbox: { relay: false, delivery: 'wal', wal: { slotName }, resolveTopic: () => topic } });
    const relayConfig = (i: number) => ({ mode: 'nest', postgresUrl: services.postgresUrl, schema, brokers: services.kafkaBrokers, topic, owner: `p4-wal-${i}-${suffix(2)}`, delivery: 'wal', slotName });
    instances.push(new Worker('relay-worker', relayConfig(1)), new Worker('relay-worker', relayConfig(2)));
    await Promise.all([...instances, consumer].map((worker) => worker.next('ready', 60_000)));

    const warm = await writeAtRate(writer.dataSource, 50, ORDERS_PER_SECOND);
    await waitUntil('the warm-up orders at the consumer', () => [...warm.committed.keys()].every((key) => arrivals.has(key)), 30_000);
    const streamed = await Promise.all(instances.map(async (worker) => Number((await worker.request({ type: 'status' }, 'status', 10_000)).streamed)));
    const victim = instances[streamed[0] > 0 ? 0 : 1];
    const standby = instances[streamed[0] > 0 ? 1 : 0];
    let firstPublishAt: number | undefined;
    standby.listeners.push((message) => {
      if (message.type === 'first-publish' && firstPublishAt === undefined) firstPublishAt = Number(message.at);
    });
    const slotPid = async () => (await admin.query(`SELECT active_pid FROM pg_replication_slots WHERE slot_name = $1`, [slotName])).rows[0]?.active_pid as number | null;
    const pidBefore = await slotPid();

    const writing = writeAtRate(writer.dataSource, ORDERS_PER_SECOND * SECONDS, ORDERS_PER_SECOND);
    await sleep(KILL_AFTER_MS);
    const killedAt = wallNow();
    victim.kill();
    await waitUntil('the slot streamed by the other instance', async () => {
      const pid = await slotPid();
      return pid !== null && pid !== pidBefore;
    }, 60_000, 20);
    const slotSeconds = (wallNow() - killedAt) / 1000;
    await waitUntil("the standby's first acknowledged publish", () => firstPublishAt !== undefined, 60_000, 5);
    const run = await writing;
    const orders = [...run.committed];
    await waitUntil('every order at the consumer', () => orders.every(([key]) => arrivals.has(key)), 60_000).catch(() => undefined);

    const afterKill = orders.filter(([, committedAt]) => committedAt > killedAt);
    const times = [killedAt, ...[...arrivals.values()].flat().filter((at) => at > killedAt)].sort((a, b) => a - b);
    const gap = Math.max(...times.slice(1).map((at, i) => at - times[i]));
    const worst = Math.max(...afterKill.filter(([key]) => arrivals.has(key)).map(([key, committedAt]) => arrivals.get(key)![0] - committedAt));
    return {
      slotSeconds,
      firstPublishSeconds: (firstPublishAt! - killedAt) / 1000,
      gapSeconds: gap / 1000,
      worstLatencySeconds: worst / 1000,
      orders: orders.length,
      lost: orders.filter(([key]) => !arrivals.has(key)).length,
      duplicates: orders.reduce((sum, [key]) => sum + Math.max(0, (arrivals.get(key)?.length ?? 0) - 1), 0),
    };
  } finally {
    await Promise.all(instances.map((worker) => worker.close()));
    await consumer.close();
    await writer?.app.close();
    await dropWalSlot(async (sql, params) => (await admin.query(sql, params)).rows, { slotName, publicationName: slotName }).catch(() => undefined);
    await admin.end();
    await drop();
  }
}

/** For a run on its own: `node .bench/build/test/bench/p4-wal-takeover.js [runs]`. */
export async function standalone(): Promise<void> {
  const context: BenchContext = { services: benchServices(), sizes: QUICK, log: (message) => console.error(message) };
  const { lines, summary } = await walTakeoverRuns(context, Number(process.argv[2] ?? 3));
  console.log([...lines, '', ...summary.map((row) => `${row.figure}: ${row.value}`)].join('\n'));
}

if (require.main === module) void standalone().then(() => process.exit(0), (error: unknown) => (console.error(error), process.exit(1)));
