import { Worker, type WorkerMessage } from './support/child';
import { pidCpuMs, ServerCpu } from './support/cpu';
import { privateSchema, suffix, waitUntil, withClient } from './support/env';
import { PostgresOutboxDialect } from './support/outbox';
import { type BenchContext, type Section, type SummaryRow, table } from './support/report';
import { aggregatesOf, type Backlog, seedOutboxTable } from './support/seed';
import { fmt, fmtRatio } from './support/stats';
import { walTakeoverRuns } from './p4-wal-takeover';

const EVENTS_PER_AGGREGATE = 4;
const RELAY_COUNTS = [1, 2, 4];

interface Outcome {
  relays: number;
  seconds: number;
  perSecond: number;
  shares: number[];
  published: number;
  consumed: number;
  violations: number;
  duplicates: number;
  examples: string[];
  problems: string[];
  /** µs of CPU per message: all relay processes together, PostgreSQL's server processes. */
  cpuPerMessage: { relays: number; postgres: number };
}

/**
 * P4: 1, 2 and 4 relays, each a separate OS process (child_process.fork), draining one shared
 * backlog; a consumer in another process checks every aggregate's order (`payload.seq`).
 */
export async function p4ScaleOut(context: BenchContext): Promise<Section> {
  const { sizes } = context;
  const backlog: Backlog = { count: sizes.drainRows, eventsPerAggregate: EVENTS_PER_AGGREGATE };
  const outcomes: Outcome[] = [];
  for (const relays of RELAY_COUNTS) {
    outcomes.push(await drainWith(context, relays, backlog));
    const last = outcomes.at(-1)!;
    context.log(`P4 ${relays} relay(s): ${fmt(last.perSecond)} msg/s, ${last.violations} order violations, ${last.duplicates} duplicates`);
  }
  const takeover = await walTakeoverRuns(context, 5);
  const base = outcomes[0].perSecond;
  const summary: SummaryRow[] = [
    { bench: 'P4', figure: `msg/s with ${RELAY_COUNTS.join(' → ')} relay processes`, value: outcomes.map((o) => fmt(o.perSecond)).join(' → ') },
    ...(outcomes.length > 1
      ? [{ bench: 'P4', figure: 'two relay processes / one', value: fmtRatio(outcomes[1].perSecond / base), aim: '≥ 1.3×', met: outcomes[1].perSecond >= base * 1.3 }]
      : []),
    {
      bench: 'P4',
      figure: 'per-aggregate order violations (all runs)',
      value: String(outcomes.reduce((sum, o) => sum + o.violations, 0)),
      aim: '0',
      met: outcomes.every((o) => o.violations === 0 && o.consumed === backlog.count),
    },
  ];
  return {
    id: 'P4',
    title: `P4 — 1 → 2 → 4 relay processes draining one backlog of ${fmt(backlog.count, 0)} rows (${fmt(aggregatesOf(backlog), 0)} aggregates × ${EVENTS_PER_AGGREGATE} events)`,
    body: [
      ...table(
        ['relays', 'seconds', 'msg/s', 'vs 1 relay', 'rows per relay', 'consumed (distinct)', 'order violations', 'duplicates', 'CPU µs per message: relays / PostgreSQL'],
        outcomes.map((o) => [
          String(o.relays),
          fmt(o.seconds),
          fmt(o.perSecond),
          fmtRatio(o.perSecond / base),
          o.shares.map((share) => fmt(share, 0)).join(' / '),
          fmt(o.consumed, 0),
          String(o.violations),
          String(o.duplicates),
          `${fmt(o.cpuPerMessage.relays, 0)} / ${fmt(o.cpuPerMessage.postgres, 0)}`,
        ]),
      ),
      '',
      'Each relay is the P1 relay (defaults, batchSize 100) in its own process; it runs `publishBatch()` until nothing is claimable, and while rows are still pending ' +
        '(leased by others, or behind another relay’s row of the same aggregate) it retries every 5 ms. Seconds run from "go" to the last relay finding no pending row. ' +
        'A violation is a record whose `seq` is lower than one already received for its key (redeliveries are counted as duplicates instead). ' +
        'The consumer runs during the drain, so it takes a share of the 2 cores in every row alike.',
      ...outcomes.flatMap((o) => (o.examples.length ? [`- ${o.relays} relays, first violations: ${o.examples.join('; ')}`] : [])),
      ...outcomes.flatMap((o) => (o.problems.length ? [`- ${o.relays} relays, relay log: ${o.problems.join('; ')}`] : [])),
      '',
      '**WAL mode: takeover after SIGKILL of the streaming instance** (one stream per slot, so the WAL mode scales out by slots and databases, not by instances; see SCALING.md).',
      '',
      ...takeover.lines,
    ],
    summary: [...summary, ...takeover.summary],
  };
}

async function drainWith(context: BenchContext, relays: number, backlog: Backlog): Promise<Outcome> {
  const { services } = context;
  const { schema, drop } = await privateSchema(services.postgresUrl, `bench_p4_${relays}`);
  const topic = `bench-p4-${relays}-${suffix()}`;
  const outboxTable = 'outbox_messages';
  const consumer = new Worker('consumer-worker', { brokers: services.kafkaBrokers, topic, mode: 'order', maxWaitTimeInMs: 50 });
  const workers: Worker[] = [];
  try {
    await withClient(services.postgresUrl, async (client) => {
      await client.query(`SET search_path TO ${schema}`);
      for (const sql of new PostgresOutboxDialect(outboxTable).createTable()) await client.query(sql);
      await seedOutboxTable(client, schema, outboxTable, topic, backlog);
    });
    for (let i = 0; i < relays; i++) {
      workers.push(
        new Worker('relay-worker', {
          mode: 'drain',
          postgresUrl: services.postgresUrl,
          schema,
          table: outboxTable,
          brokers: services.kafkaBrokers,
          topic,
          owner: `p4-${relays}-${i}-${suffix(2)}`,
        }),
      );
    }
    await consumer.next('ready', 60_000);
    await Promise.all(workers.map((worker) => worker.next('ready', 60_000)));

    const server = await withClient(services.postgresUrl, (client) => ServerCpu.of(client));
    const cpuBefore = { server: server?.snapshot(), relays: workers.map((worker) => pidCpuMs(worker.pid)) };
    const started = performance.now();
    workers.forEach((worker) => worker.send({ type: 'go' }));
    const done: WorkerMessage[] = await Promise.all(workers.map((worker) => worker.next('done', Math.max(300_000, backlog.count * 12))));
    const seconds = (performance.now() - started) / 1000;
    // CPU per message, which the capacity model of SCALING.md divides cores by: robust to a shared machine where msg/s is not.
    const relayMs = workers.reduce((sum, worker, i) => sum + pidCpuMs(worker.pid) - cpuBefore.relays[i], 0);
    const serverMs = server && cpuBefore.server ? server.millisecondsSince(cpuBefore.server) : Number.NaN;
    const published = await withClient(services.postgresUrl, async (client) =>
      Number((await client.query(`SELECT count(*) AS n FROM "${schema}"."${outboxTable}" WHERE status = 'published'`)).rows[0].n),
    );

    let report: WorkerMessage = { type: 'report' };
    await waitUntil(
      'the consumer to see every row',
      async () => {
        report = await consumer.request({ type: 'report' }, 'report', 10_000);
        return Number(report.distinct) >= backlog.count;
      },
      60_000,
      500,
    ).catch(() => undefined);
    return {
      relays,
      seconds,
      perSecond: published / seconds,
      shares: done.map((message) => Number(message.published)),
      published,
      consumed: Number(report.distinct ?? 0),
      violations: Number(report.violations ?? 0),
      duplicates: Number(report.duplicates ?? 0),
      examples: (report.examples as string[] | undefined) ?? [],
      problems: done.flatMap((message) => (message.problems as string[]) ?? []),
      cpuPerMessage: { relays: (relayMs * 1000) / backlog.count, postgres: (serverMs * 1000) / backlog.count },
    };
  } finally {
    await Promise.all(workers.map((worker) => worker.close()));
    await consumer.close();
    await drop();
  }
}
