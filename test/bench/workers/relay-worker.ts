import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { sleep, wallNow } from '../support/env';
import { startBenchApp } from '../support/nest-apps';
import { createOurRelay } from '../support/our-relay';
import { OUTBOX_STREAM, type DeliveryStream } from '../support/outbox';

/**
 * A relay in a process of its own.
 * - `nest`: the app as users run it (OutboxModule with the Kafka client, default options except
 *   `notifications`), idle until stopped, answering "status": P3's relay in another process,
 *   and with `delivery: 'wal'` P4's streaming and standby instances.
 * - `drain`: the P1 relay (OutboxRelay + SQL store + ClientKafka transport); on "go" it publishes
 *   until no pending row is left, then reports: P4's relays and P5's memory run.
 */
interface Config {
  mode: 'nest' | 'drain';
  postgresUrl: string;
  schema: string;
  table?: string;
  brokers: string[];
  topic: string;
  owner: string;
  notifications?: boolean;
  /** Nest mode: the module's `preparedStatements` (default true). */
  preparedStatements?: boolean;
  batchSize?: number;
  /** Nest mode: `delivery: 'wal'` streams the slot `slotName` (and runs the table relay beside it). */
  delivery?: 'wal';
  slotName?: string;
  /** Nest mode: report "ready" once loaded and start the app only on "go" (then report "started"). */
  waitForGo?: boolean;
  /** Report memory every this many ms (drain mode). */
  sampleMs?: number;
}

const config = JSON.parse(process.argv[2]) as Config;
const send = (message: Record<string, unknown>) => process.send?.(message);
const commands: Array<{ type: string }> = [];
let wake: (() => void) | undefined;
let stopRequested = false;
process.on('message', (message: { type: string }) => {
  if (message.type === 'stop') stopRequested = true;
  commands.push(message);
  wake?.();
});

async function nextCommand(): Promise<string> {
  while (commands.length === 0) await new Promise<void>((resolve) => (wake = resolve));
  return commands.shift()!.type;
}

function peakRss(): number {
  const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

async function nestMode(): Promise<void> {
  if (config.waitForGo) {
    // Loaded, not yet started: the app (and its stream) starts on "go", so several start together.
    send({ type: 'ready' });
    while ((await nextCommand()) !== 'go');
  }
  const { app } = await startBenchApp({
    postgresUrl: config.postgresUrl,
    schema: config.schema,
    migrate: false,
    kafka: { brokers: config.brokers, clientId: `bench-${config.owner}` },
    outbox: {
      transport: 'KAFKA',
      relayId: config.owner,
      notifications: config.notifications ?? true,
      preparedStatements: config.preparedStatements ?? true,
      resolveTopic: () => config.topic,
      ...(config.delivery ? { delivery: config.delivery, wal: { slotName: config.slotName } } : {}),
      ...(config.batchSize ? { batchSize: config.batchSize } : {}),
    },
  });
  send({ type: config.waitForGo ? 'started' : 'ready' });
  // WAL mode: when this instance's stream first has a publish acknowledged (a standby: after it took
  // over), on the wall clock the parent shares. Each new stream counts from 0, so a rise from 0 is news.
  let streamed = 0;
  const publishedBy = (nest: typeof app) => nest.get<DeliveryStream | null>(OUTBOX_STREAM)?.publishedCount ?? 0;
  const watch = config.delivery
    ? setInterval(() => {
        const now = publishedBy(app);
        if (streamed === 0 && now > 0) send({ type: 'first-publish', at: wallNow() });
        streamed = now;
      }, 1)
    : undefined;
  for (let command = await nextCommand(); command !== 'stop'; command = await nextCommand()) {
    // The WAL mode's stream counts what it published since it connected: 0 on a standby instance.
    if (command === 'status') send({ type: 'status', streamed: config.delivery ? publishedBy(app) : 0 });
  }
  clearInterval(watch);
  await app.close();
}

async function drainMode(): Promise<void> {
  const ours = await createOurRelay({
    postgresUrl: config.postgresUrl,
    schema: config.schema,
    table: config.table ?? 'outbox_messages',
    brokers: config.brokers,
    owner: config.owner,
    batchSize: config.batchSize,
  });
  const producer = await ours.client.connect();
  await producer.send({ topic: config.topic, acks: -1, messages: [{ key: '__warmup', value: '{}' }] });
  send({ type: 'ready', rss: process.memoryUsage().rss });
  for (;;) {
    const command = await nextCommand();
    if (command === 'go') break;
    if (command === 'stop') return ours.close();
  }

  let published = 0;
  let batches = 0;
  const sampler = config.sampleMs
    ? setInterval(() => {
        // Beside RSS, what V8 holds (heapTotal: every space, the young generation's too) and what
        // lives outside its heap (external: Buffers and other native allocations it is told of).
        const { rss, heapUsed, heapTotal, external } = process.memoryUsage();
        send({ type: 'sample', rss, heapUsed, heapTotal, external, published });
      }, config.sampleMs)
    : undefined;
  const started = performance.now();
  const pending = `SELECT EXISTS (SELECT 1 FROM "${config.table ?? 'outbox_messages'}" WHERE status = 'pending') AS pending`;
  while (!stopRequested) {
    const outcome = await ours.relay.publishBatch();
    published += outcome.published;
    if (outcome.claimed > 0) {
      batches++;
      continue;
    }
    // Nothing claimable for this relay: the rest is leased by others, or waits behind their rows.
    if (!(await ours.dataSource.query(pending))[0].pending) break;
    await sleep(5);
  }
  const seconds = (performance.now() - started) / 1000;
  if (sampler) clearInterval(sampler);
  send({
    type: 'done',
    stopped: stopRequested,
    published,
    batches,
    seconds,
    rss: process.memoryUsage().rss,
    peakRss: peakRss(),
    warnings: ours.logger.warnings,
    errors: ours.logger.errors,
    problems: ours.logger.first,
  });
  while (!stopRequested && (await nextCommand()) !== 'stop');
  await ours.close();
}

(config.mode === 'nest' ? nestMode() : drainMode())
  .then(() => process.exit(0))
  .catch((error: unknown) => {
    send({ type: 'error', error: error instanceof Error ? error.stack : String(error) });
    process.exit(1);
  });
