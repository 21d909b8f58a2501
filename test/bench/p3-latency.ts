import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { Worker } from './support/child';
import { pidCpuMs, processCpuMs, ServerCpu } from './support/cpu';
import { BenchParcel } from './support/entities';
import { claimOrderIndex } from './support/explain';
import { connectedProducer, privateSchema, REPO_ROOT, sleep, suffix, waitUntil, wallNow, withClient } from './support/env';
import { startBenchApp } from './support/nest-apps';
import { dropWalSlot, OUTBOX_DEFAULTS } from './support/outbox';
import { type BenchContext, type Section, type SummaryRow, table } from './support/report';
import { distribution, type Distribution, fmt } from './support/stats';

interface Scenario {
  key: string;
  name: string;
  /** Relay inside the writer's process (else a forked process running the same Nest app). */
  inProcess: boolean;
  notifications: boolean;
  aim: boolean;
  /** The relay process's `preparedStatements` (default true). */
  preparedStatements?: boolean;
  /** Add P1's claim-matching index to the outbox table (reference). */
  extraIndex?: boolean;
  /** The delivery mode of the writer and its relay (default the table mode). */
  delivery?: 'wal';
  /** The WAL mode's `wal.write` (the module's default, `'row'`, when left out). */
  walWrite?: 'message';
  /** Offered orders/s when not the size's (`offeredPerSecond`). */
  perSecond?: number;
  /** The bars of the issue this scenario is held against, ms. */
  bars?: { p50: number; p99: number };
}

interface Outcome {
  scenario: string;
  latency: Distribution;
  /** Mean latency of the orders committed in each third of the run: a rising row means the relay falls behind. */
  thirds?: number[];
  saveLatency?: Distribution;
  offered: number;
  delivered: number;
  achievedPerSecond: number;
  maxInFlight: number;
  /** CPU of each party from the run's first order to its last delivery, in % of one core. */
  cpu?: PartyCpu;
}

interface PartyCpu {
  /** The writer's process (with its relay in (a)). */
  writer: number;
  relay?: number;
  postgres: number;
  /** The measuring kafkajs consumer. */
  consumer: number;
  /** µs of CPU per order: the writer's and relay's processes together, PostgreSQL's (robust to a shared machine, where the % are not). */
  perOrder: { app: number; postgres: number };
}

const WARMUP = 50;

/**
 * P3: commit → consumer latency at a steady offered load. The writer saves one `BenchParcel` per
 * order on a fixed schedule (open loop); the time of commit is when `transaction()` resolved. A
 * kafkajs consumer in its own process stamps each record when its batch arrives. Both stamps are
 * wall-clock times of the same machine.
 */
export async function p3Latency(context: BenchContext): Promise<Section> {
  const scenarios: Scenario[] = [
    { key: 'a', name: '(a) relay in the writer’s process, woken after commit (defaults)', inProcess: true, notifications: true, aim: true, bars: { p50: 5, p99: 50 } },
    {
      key: 'b',
      name: `(b) relay in another process, polling only (\`notifications: false\`, \`pollIntervalMs\` ${OUTBOX_DEFAULTS.pollIntervalMs})`,
      inProcess: false,
      notifications: false,
      aim: false,
    },
    { key: 'c', name: '(c) relay in another process, woken by LISTEN/NOTIFY (defaults)', inProcess: false, notifications: true, aim: true, bars: { p50: 5, p99: 50 } },
    {
      key: 'c-unnamed',
      name: '(c) with `preparedStatements: false` on the relay (claim and settles planned on every call; reference)',
      inProcess: false,
      notifications: true,
      preparedStatements: false,
      aim: false,
    },
  ];
  scenarios.push(...walScenarios(context.sizes.offeredPerSecond));
  if (await claimOrderIndex('t')) {
    scenarios.push({ key: 'a+idx', name: '(a) + the claim-matching index of P1 (reference)', inProcess: true, notifications: true, aim: false, extraIndex: true });
  }
  // BENCH_P3_SCENARIOS=a,a-wal: only these scenarios (keys as in the report), for a side-by-side look at a few.
  const only = process.env.BENCH_P3_SCENARIOS?.split(',');
  if (only) scenarios.splice(0, scenarios.length, ...scenarios.filter((scenario) => only.includes(scenario.key)));
  const outcomes: Outcome[] = [await floor(context)];
  for (const scenario of scenarios) {
    outcomes.push(await runScenario(context, scenario));
    context.log(`P3 ${scenario.key}: p50 ${fmt(outcomes.at(-1)!.latency.p50)} ms, p99 ${fmt(outcomes.at(-1)!.latency.p99)} ms`);
  }
  const { sizes } = context;
  const summary: SummaryRow[] = [];
  scenarios.forEach((scenario, index) => {
    const { latency } = outcomes[index + 1];
    const bars = scenario.aim ? scenario.bars : undefined;
    summary.push({
      bench: 'P3',
      figure: `${scenario.key}: commit → consumer p50`,
      value: `${fmt(latency.p50)} ms`,
      aim: bars ? `≤ ${bars.p50} ms` : undefined,
      met: bars ? latency.p50 <= bars.p50 : undefined,
    });
    summary.push({
      bench: 'P3',
      figure: `${scenario.key}: p99 / max`,
      value: `${fmt(latency.p99)} / ${fmt(latency.max)} ms`,
      aim: bars ? `p99 ≤ ${bars.p99} ms` : undefined,
      met: bars ? latency.p99 <= bars.p99 : undefined,
    });
  });
  return {
    id: 'P3',
    title: `P3 — commit → consumer latency at ${sizes.offeredPerSecond} orders/s for ${sizes.latencySeconds} s`,
    body: [
      ...table(
        ['scenario', 'delivered / offered', 'achieved orders/s', 'p50 ms', 'p99 ms', 'max ms', 'mean ms by third of the run', 'save p50 / p99 ms', 'CPU % of a core: writer / relay / PostgreSQL / consumer', 'CPU µs per order: writer + relay / PostgreSQL'],
        outcomes.map((o) => [
          o.scenario,
          `${fmt(o.delivered, 0)} / ${fmt(o.offered, 0)}`,
          fmt(o.achievedPerSecond),
          fmt(o.latency.p50, 2),
          fmt(o.latency.p99, 2),
          fmt(o.latency.max, 2),
          o.thirds ? o.thirds.map((mean) => fmt(mean)).join(' → ') : '',
          o.saveLatency ? `${fmt(o.saveLatency.p50, 2)} / ${fmt(o.saveLatency.p99, 2)}` : '',
          o.cpu ? [o.cpu.writer, o.cpu.relay, o.cpu.postgres, o.cpu.consumer].map((value) => (value === undefined ? '–' : fmt(value, 0))).join(' / ') : '',
          o.cpu ? `${fmt(o.cpu.perOrder.app, 0)} / ${fmt(o.cpu.perOrder.postgres, 0)}` : '',
        ]),
      ),
      '',
      `Open-loop writer: order i is started at t0 + i/${sizes.offeredPerSecond} s (at most ${Math.max(...outcomes.map((o) => o.maxInFlight))} saves were in flight at once), ` +
        `each \`transaction(m => m.save(BenchParcel.register(…)))\` on a pool of 10; ${WARMUP} orders before t0 warm every path up and are not counted. ` +
        `The consumer (kafkajs in its own process, \`maxWaitTimeInMs\` 2: the test broker holds a fetch for its full wait even when records arrive, so with 20 ms the floor’s p50 was ~11 ms) stamps records on arrival. The first row is the floor of this ` +
        `setup: kafkajs \`send\` of one record → the same consumer, no database, same rate. Per-order series: \`.bench/p3-<scenario>.csv\`. ` +
        `CPU (from /proc, user + system) is counted from the run's first order to its last delivery: the writer's process (in (a) with its relay), ` +
        `the relay's process, PostgreSQL's server processes and the measuring consumer; 200 % is both cores of this machine.`,
    ],
    summary,
  };
}

async function runScenario(context: BenchContext, scenario: Scenario): Promise<Outcome> {
  const { services, sizes } = context;
  const perSecond = scenario.perSecond ?? sizes.offeredPerSecond;
  const { schema, drop } = await privateSchema(services.postgresUrl, 'bench_p3');
  const topic = `bench-p3-${scenario.key}-${suffix()}`;
  const slotName = `${schema}_slot`;
  const received = new Map<string, number>();
  const consumer = new Worker('consumer-worker', { brokers: services.kafkaBrokers, topic, mode: 'latency' });
  consumer.listeners.push((message) => {
    if (message.type === 'received') for (const [key, at] of message.items as Array<[string, number]>) received.set(key, at);
  });
  let relay: Worker | undefined;
  let writer: Awaited<ReturnType<typeof startBenchApp>> | undefined;
  const delivery = scenario.delivery ? { delivery: scenario.delivery, wal: { slotName, write: scenario.walWrite } } : {};
  try {
    writer = await startBenchApp({
      postgresUrl: services.postgresUrl,
      schema,
      migrate: true,
      kafka: scenario.inProcess ? { brokers: services.kafkaBrokers, clientId: `bench-p3-${scenario.key}` } : undefined,
      outbox: scenario.inProcess
        ? { transport: 'KAFKA', resolveTopic: () => topic, ...delivery }
        : { relay: false, resolveTopic: () => topic, notifications: scenario.notifications, ...delivery },
    });
    if (scenario.extraIndex) await writer.dataSource.query((await claimOrderIndex('outbox_messages'))!);
    if (!scenario.inProcess) {
      relay = new Worker('relay-worker', {
        mode: 'nest',
        postgresUrl: services.postgresUrl,
        schema,
        brokers: services.kafkaBrokers,
        topic,
        owner: `p3-${scenario.key}-${suffix(2)}`,
        notifications: scenario.notifications,
        preparedStatements: scenario.preparedStatements,
        delivery: scenario.delivery,
        slotName,
      });
      await relay.next('ready', 60_000);
    }
    await consumer.next('ready', 60_000);

    const warm = await writeAtRate(writer.dataSource, WARMUP, perSecond);
    await waitUntil('the warm-up orders at the consumer', () => [...warm.committed.keys()].every((key) => received.has(key)), 30_000);

    const total = perSecond * sizes.latencySeconds;
    const server = await withClient(services.postgresUrl, (client) => ServerCpu.of(client));
    const cpuBefore = { at: performance.now(), writer: processCpuMs(), relay: relay ? pidCpuMs(relay.pid) : 0, consumer: pidCpuMs(consumer.pid), server: server?.snapshot() };
    const run = await writeAtRate(writer.dataSource, total, perSecond);
    await waitUntil('every order at the consumer', () => [...run.committed.keys()].every((key) => received.has(key)), 30_000).catch(() => undefined);
    const share = (ms: number) => (ms / (performance.now() - cpuBefore.at)) * 100;
    const used = {
      writer: processCpuMs() - cpuBefore.writer,
      relay: relay ? pidCpuMs(relay.pid) - cpuBefore.relay : 0,
      postgres: server && cpuBefore.server ? server.millisecondsSince(cpuBefore.server) : Number.NaN,
    };
    const cpu: PartyCpu = {
      writer: share(used.writer),
      relay: relay ? share(used.relay) : undefined,
      postgres: share(used.postgres),
      consumer: share(pidCpuMs(consumer.pid) - cpuBefore.consumer),
      perOrder: { app: ((used.writer + used.relay) * 1000) / total, postgres: (used.postgres * 1000) / total },
    };
    const latencies = [...run.committed].filter(([key]) => received.has(key)).map(([key, at]) => received.get(key)! - at);
    // The time series, for a look at where the tail comes from: ms since the first commit, latency ms.
    const t0 = Math.min(...run.committed.values());
    mkdirSync(join(REPO_ROOT, '.bench'), { recursive: true });
    writeFileSync(
      join(REPO_ROOT, '.bench', `p3-${scenario.key}.csv`),
      ['commit_ms,latency_ms', ...[...run.committed].map(([key, at]) => `${(at - t0).toFixed(1)},${((received.get(key) ?? Number.NaN) - at).toFixed(1)}`)].join('\n'),
    );
    const span = Math.max(...run.committed.values()) - t0;
    const thirds = [0, 1, 2].map((third) => {
      const inThird = [...run.committed].filter(([key, at]) => received.has(key) && Math.min(2, Math.floor(((at - t0) / (span || 1)) * 3)) === third);
      return inThird.reduce((sum, [key, at]) => sum + received.get(key)! - at, 0) / (inThird.length || 1);
    });
    return {
      scenario: scenario.name,
      latency: distribution(latencies),
      thirds,
      saveLatency: distribution(run.saveLatencies),
      offered: total,
      delivered: latencies.length,
      achievedPerSecond: run.achievedPerSecond,
      maxInFlight: run.maxInFlight,
      cpu,
    };
  } finally {
    await consumer.close();
    await relay?.close();
    await writer?.app.close();
    if (scenario.delivery) await withClient(services.postgresUrl, (client) => dropWalSlot(async (sql, params) => (await client.query(sql, params)).rows, { slotName, publicationName: slotName }));
    await drop();
  }
}

/**
 * The WAL delivery mode (`delivery: 'wal'`, the event as a stream-owned row, or with
 * `wal.write: 'message'` a logical message, streamed in commit order): the relay in the writer's process held to the bars of
 * issue 19 (p50 ≤ 5 ms, p99 ≤ 25 ms at 500 orders/s), in another process for reference, and at
 * 2,000 orders/s in the writer's process and in another one (reported; no bar), beside the table
 * mode at that rate.
 */
function walScenarios(offered: number): Scenario[] {
  const fast = offered * 4;
  return [
    { key: 'a-wal', name: '(a-wal) WAL mode, stream relay in the writer’s process (`delivery: \'wal\'`, defaults)', inProcess: true, notifications: true, aim: true, delivery: 'wal', bars: { p50: 5, p99: 25 } },
    { key: 'c-wal', name: '(c-wal) WAL mode, stream relay in another process (reference)', inProcess: false, notifications: true, aim: false, delivery: 'wal' },
    { key: `a-wal-${fast}`, name: `(a-wal) at ${fast} orders/s (reported)`, inProcess: true, notifications: true, aim: false, delivery: 'wal', perSecond: fast },
    { key: `c-wal-${fast}`, name: `(c-wal) at ${fast} orders/s: the stream on a thread of its own, not the writer's (reported)`, inProcess: false, notifications: true, aim: false, delivery: 'wal', perSecond: fast },
    { key: 'a-wal-msg', name: "(a-wal) with `wal.write: 'message'` (reference)", inProcess: true, notifications: true, aim: false, delivery: 'wal', walWrite: 'message' },
    { key: `a-wal-msg-${fast}`, name: `(a-wal) with \`wal.write: 'message'\` at ${fast} orders/s (reference)`, inProcess: true, notifications: true, aim: false, delivery: 'wal', walWrite: 'message', perSecond: fast },
    { key: `a-${fast}`, name: `(a) table mode at ${fast} orders/s (reference)`, inProcess: true, notifications: true, aim: false, perSecond: fast },
  ];
}

/** Saves `count` parcels, starting order i at t0 + i/rate whatever the earlier ones are doing. */
export async function writeAtRate(dataSource: DataSource, count: number, perSecond: number) {
  const committed = new Map<string, number>();
  const saveLatencies: number[] = [];
  const writes: Promise<void>[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const intervalMs = 1000 / perSecond;
  const started = performance.now();
  let launched = 0;
  while (launched < count) {
    const due = Math.min(count, Math.floor((performance.now() - started) / intervalMs) + 1);
    for (; launched < due; launched++) {
      const parcel = BenchParcel.register(`order-${launched}`, 100 + launched);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const saveStarted = performance.now();
      writes.push(
        dataSource
          .transaction((manager) => manager.save(parcel))
          .then(() => {
            committed.set(parcel.id, wallNow());
            saveLatencies.push(performance.now() - saveStarted);
          })
          .finally(() => inFlight--),
      );
    }
    await sleep(1);
  }
  const launchSeconds = (performance.now() - started) / 1000;
  await Promise.all(writes);
  return { committed, saveLatencies, maxInFlight, achievedPerSecond: count / Math.max(launchSeconds, (count - 1) / perSecond) };
}

/** The setup's own floor: kafkajs send of one record at a time, at the same rate, to the same kind of consumer. */
async function floor(context: BenchContext): Promise<Outcome> {
  const { services, sizes } = context;
  const topic = `bench-p3-floor-${suffix()}`;
  const received = new Map<string, number>();
  const consumer = new Worker('consumer-worker', { brokers: services.kafkaBrokers, topic, mode: 'latency' });
  consumer.listeners.push((message) => {
    if (message.type === 'received') for (const [key, at] of message.items as Array<[string, number]>) received.set(key, at);
  });
  const producer = await connectedProducer(services.kafkaBrokers, 'bench-p3-floor');
  try {
    await producer.send({ topic, acks: -1, messages: [{ key: '__warmup', value: '{}' }] });
    await consumer.next('ready', 60_000);
    const count = sizes.offeredPerSecond * Math.min(5, sizes.latencySeconds);
    const sent = new Map<string, number>();
    const sends: Promise<unknown>[] = [];
    const started = performance.now();
    for (let i = 0; i < count; i++) {
      const due = started + (i * 1000) / sizes.offeredPerSecond;
      while (performance.now() < due) await sleep(1);
      const key = `floor-${i}`;
      sent.set(key, wallNow());
      sends.push(producer.send({ topic, acks: -1, messages: [{ key, value: JSON.stringify({ i }) }] }));
    }
    const achieved = count / ((performance.now() - started) / 1000);
    await Promise.all(sends);
    await waitUntil('the floor records at the consumer', () => received.size >= count, 30_000).catch(() => undefined);
    const latencies = [...sent].filter(([key]) => received.has(key)).map(([key, at]) => received.get(key)! - at);
    return { scenario: 'floor: kafkajs `send` → consumer (no database, no relay)', latency: distribution(latencies), offered: count, delivered: latencies.length, achievedPerSecond: achieved, maxInFlight: 0 };
  } finally {
    await producer.disconnect();
    await consumer.close();
  }
}
