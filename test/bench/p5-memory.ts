import { Worker, type WorkerMessage } from './support/child';
import { privateSchema, suffix, withClient } from './support/env';
import { claimOrderIndex, explainClaim } from './support/explain';
import { PostgresOutboxDialect } from './support/outbox';
import { type BenchContext, type Section, type SummaryRow, table } from './support/report';
import { type Backlog, seedOutboxTable } from './support/seed';
import { fmt, mb } from './support/stats';
import { walRetained, walRetainedSection } from './p5-wal-retained';

const SAMPLE_MS = 1_000;
const AIM_MB = 250;
/**
 * Flat: the highest RSS sample of the last third of the run is at most this much above the highest of
 * the first third (highest, not single samples, because garbage collection makes RSS a sawtooth).
 */
const FLAT_MB = 20;

interface Variant {
  key: string;
  label: string;
  extraIndex: boolean;
  capMs: number;
  /** Node flags of the relay process. */
  execArgv?: string[];
}

/**
 * Node 22 and later let V8 size the young generation from the heap limit, past Node 20's 16 MB
 * semi-spaces: the relay's V8 heap (heapTotal) was 180–210 MB on Node 24 against 80–130 MB on
 * Node 20 in the same drain, and its RSS ~100 MB higher. The same drain with the semi-spaces capped
 * at Node 20's size shows how much of the RSS that is.
 */
const SEMI_SPACE_CAP = '--max-semi-space-size=16';
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

interface Outcome {
  variant: Variant;
  finished: boolean;
  published: number;
  seconds: number;
  baseline: number;
  peak: number;
  growth: number;
  rows: string[][];
  plan: string[];
}

/**
 * P5: resident memory of one relay process (the P1 relay, defaults) while it drains a backlog of
 * 1M rows; sampled every second by the process itself, peak from /proc/self/status (VmHWM).
 * Every run is bounded by its cap.
 */
export async function p5Memory(context: BenchContext): Promise<Section> {
  const { sizes } = context;
  // The quick size has no memory drain: P5 is then the WAL mode's retention row alone.
  if (sizes.memoryRows === 0) return walRetainedSection(context);
  const wal = await walRetained(context);
  const backlog: Backlog = { count: sizes.memoryRows, eventsPerAggregate: 4 };
  // While the claim statement cannot use its index (see P1) a drain of 1M rows cannot finish in
  // reasonable time: then the shipped run is cut short and the drain is measured with the index.
  const mismatch = (await claimOrderIndex('t')) !== undefined;
  const variants: Variant[] = [
    { key: 'shipped', label: 'as shipped (defaults)', extraIndex: false, capMs: mismatch ? 120_000 : 480_000 },
    ...(mismatch ? [{ key: 'idx', label: 'defaults + the claim-matching index (P1 reference)', extraIndex: true, capMs: 480_000 }] : []),
    ...(NODE_MAJOR >= 22 ? [{ key: 'semi16', label: `defaults, node ${SEMI_SPACE_CAP}`, extraIndex: false, capMs: 480_000, execArgv: [SEMI_SPACE_CAP] }] : []),
  ];
  const outcomes: Outcome[] = [];
  for (const variant of variants) outcomes.push(await drain(context, backlog, variant));

  const summary: SummaryRow[] = [...outcomes.map((o) => ({
    bench: 'P5',
    figure: `peak RSS, ${o.variant.label}${o.finished ? '' : `, capped at ${o.variant.capMs / 1000} s after ${fmt(o.published, 0)} rows`}`,
    value: `${fmt(mb(o.peak))} MB (last third vs first third: ${o.growth >= 0 ? '+' : ''}${fmt(mb(o.growth))} MB; ${fmt(o.published / o.seconds)} msg/s)`,
    aim: `flat, < ${AIM_MB} MB`,
    met: mb(o.peak) < AIM_MB && mb(o.growth) < FLAT_MB,
  })), ...wal.summary];
  return {
    id: 'P5',
    title: `P5 — peak RSS of one relay process draining ${fmt(backlog.count, 0)} rows`,
    body: [
      ...table(
        ['run', 'progress', 'rows published', 'seconds', 'RSS MB', 'heap used MB', 'V8 heap MB', 'external MB'],
        outcomes.flatMap((o) => o.rows.map((row) => [o.variant.key, ...row])),
      ),
      '',
      `V8 heap: what V8 has committed for every space (\`heapTotal\`, the young generation's semi-spaces among them); external: memory outside that heap V8 is told of (Buffers). The RSS beyond both is native: code, the allocator's arenas, thread stacks. Node ${process.versions.node}.`,
      '',
      ...outcomes.map(
        (o) =>
          `- ${o.variant.label}: ${o.finished ? 'drained' : `**not drained**, stopped at the ${o.variant.capMs / 1000} s cap with`} ${fmt(o.published, 0)} of ${fmt(backlog.count, 0)} rows ` +
          `in ${fmt(o.seconds)} s (${fmt(o.published / o.seconds)} msg/s); the highest RSS of the last third of the run is ${fmt(mb(o.growth))} MB above that of the first third.`,
      ),
      '',
      'EXPLAIN (ANALYZE, BUFFERS) of the library’s claim statement with the whole backlog pending (rolled back):',
      '',
      ...outcomes.flatMap((o) => o.plan),
      '',
      '**WAL mode: WAL retained per 1,000 events while the broker is down.**',
      '',
      ...wal.lines,
    ],
    summary,
  };
}

async function drain(context: BenchContext, backlog: Backlog, variant: Variant): Promise<Outcome> {
  const { services } = context;
  const { schema, drop } = await privateSchema(services.postgresUrl, `bench_p5_${variant.key}`);
  const topic = `bench-p5-${variant.key}-${suffix()}`;
  const outboxTable = 'outbox_messages';
  const samples: Array<{ at: number; rss: number; heapUsed: number; heapTotal: number; external: number; published: number }> = [];
  let plan: string[] = [];
  let worker: Worker | undefined;
  try {
    const seedStarted = performance.now();
    await withClient(services.postgresUrl, async (client) => {
      await client.query(`SET search_path TO ${schema}`);
      for (const sql of new PostgresOutboxDialect(outboxTable).createTable()) await client.query(sql);
      if (variant.extraIndex) await client.query((await claimOrderIndex(outboxTable))!);
      await seedOutboxTable(client, schema, outboxTable, topic, backlog);
      plan = await explainClaim(client, outboxTable, `${variant.key}: ${fmt(backlog.count, 0)} rows pending`, !variant.extraIndex);
    });
    context.log(`P5 ${variant.key}: seeded ${fmt(backlog.count, 0)} rows in ${fmt((performance.now() - seedStarted) / 1000)} s`);
    worker = new Worker('relay-worker', {
      mode: 'drain',
      postgresUrl: services.postgresUrl,
      schema,
      table: outboxTable,
      brokers: services.kafkaBrokers,
      topic,
      owner: `p5-${variant.key}-${suffix(2)}`,
      sampleMs: SAMPLE_MS,
    }, variant.execArgv);
    const ready = await worker.next('ready', 60_000);
    const started = performance.now();
    worker.listeners.push((message) => {
      if (message.type === 'sample') {
        const { rss, heapUsed, heapTotal, external, published } = message;
        samples.push({ at: (performance.now() - started) / 1000, rss: Number(rss), heapUsed: Number(heapUsed), heapTotal: Number(heapTotal), external: Number(external), published: Number(published) });
        if (samples.length % 30 === 0) context.log(`P5 ${variant.key}: ${fmt(Number(message.published), 0)} published, RSS ${fmt(mb(Number(message.rss)))} MB`);
      }
    });
    worker.send({ type: 'go' });
    let done: WorkerMessage;
    try {
      done = await worker.next('done', variant.capMs);
    } catch {
      worker.send({ type: 'stop' });
      done = await worker.next('done', 60_000);
    }
    const published = Number(done.published);
    const at = (share: number) => samples.find((sample) => sample.published >= share * published) ?? samples.at(-1);
    const third = (index: number) => samples.filter((sample) => Math.min(2, Math.floor((sample.at / (samples.at(-1)?.at || 1)) * 3)) === index).map((sample) => sample.rss);
    const rows: string[][] = [
      ['ready (connected, before "go")', '0', '0', fmt(mb(Number(ready.rss))), '', '', ''],
      ...[0.1, 0.25, 0.5, 0.75, 1]
        .map((share) => ({ share, sample: at(share) }))
        .filter(({ sample }) => sample)
        .map(({ share, sample }) => [`${Math.round(share * 100)} % of its rows`, fmt(sample!.published, 0), fmt(sample!.at), fmt(mb(sample!.rss)), fmt(mb(sample!.heapUsed)), fmt(mb(sample!.heapTotal)), fmt(mb(sample!.external))]),
      ['peak (VmHWM)', '', '', fmt(mb(Number(done.peakRss))), ...(['heapUsed', 'heapTotal', 'external'] as const).map((key) => fmt(mb(Math.max(...samples.map((s) => s[key])))))],
    ];
    context.log(`P5 ${variant.key}: ${fmt(published, 0)} rows in ${fmt(Number(done.seconds))} s, peak RSS ${fmt(mb(Number(done.peakRss)))} MB`);
    return {
      variant,
      finished: published >= backlog.count,
      published,
      seconds: Number(done.seconds),
      baseline: Number(ready.rss),
      peak: Number(done.peakRss),
      growth: samples.length >= 3 ? Math.max(...third(2)) - Math.max(...third(0)) : Number.NaN,
      rows,
      plan,
    };
  } finally {
    await worker?.close();
    await drop();
  }
}
