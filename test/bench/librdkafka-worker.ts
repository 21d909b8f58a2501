import { spawnSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { benchServices, connectedProducer, suffix, warmTopic } from './support/env';
import { fmt } from './support/stats';

/**
 * Whether a librdkafka producer can leave the WAL stream's thread for a worker thread, with a plain
 * producer (no library code) on the Kafka test broker. The binding loads in one thread of a process
 * only (a second `require` fails with "Module did not self-register"), so the producer would live on
 * the worker and the stream's thread would hand it records through `postMessage`. What this shows
 * on Node 24 with @confluentinc/kafka-javascript 1.10: loaded in a worker, the binding dispatches its
 * delivery reports on the main thread's loop, and the process aborts ("Entering the V8 API without
 * proper locking") — the producer has to stay on the main thread.
 *
 * For RECORDS records of the outbox's shape (a ~560-byte value, a key, six headers), in batches of
 * 100 with two in flight, both ways in turn, each in a fresh process (ROUNDS rounds): msg/s, and
 * the time the sending thread spends per record — `produce()` itself (with the header objects the
 * binding takes), or the structured clone of `postMessage`.
 *
 *   npx tsc -p test/bench/tsconfig.json && node .bench/build/test/bench/librdkafka-worker.js
 */
const RECORDS = Number(process.env.RECORDS ?? 100_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const BATCH = 100;
const IN_FLIGHT = 2;

interface WireRecord {
  key: string;
  value: string;
  headers: Record<string, string>;
}

const producerCode = `
const { Producer } = require(${JSON.stringify(require.resolve('@confluentinc/kafka-javascript'))});
module.exports = (brokers, onBatch) => new Promise((resolve, reject) => {
  const producer = new Producer({ 'bootstrap.servers': brokers, acks: -1, 'enable.idempotence': true, 'linger.ms': 1, dr_cb: true, 'socket.nagle.disable': true });
  const left = new Map();
  producer.on('delivery-report', (error, report) => {
    const batch = report.opaque;
    if (left.set(batch, left.get(batch) - 1).get(batch) === 0) { left.delete(batch); onBatch(batch); }
  });
  producer.connect({ timeout: 10000 }, (error) => {
    if (error) return reject(error);
    producer.setPollInBackground(true);
    producer.getMetadata({ allTopics: false, timeout: 10000 }, (metadataError) => metadataError ? reject(metadataError) : resolve({
      send(topic, batch, records) {
        left.set(batch, records.length);
        for (const record of records) {
          const headers = [];
          for (const name in record.headers) { const header = {}; header[name] = record.headers[name]; headers.push(header); }
          producer.produce(topic, null, Buffer.from(record.value), record.key, null, batch, headers);
        }
      },
      close: () => new Promise((done) => producer.disconnect(5000, done)),
    }));
  });
});`;

const workerCode = `
const { parentPort, workerData } = require('worker_threads');
const open = new Function('module', 'require', ${JSON.stringify(producerCode)} + '; return module.exports;')({}, require);
open(workerData.brokers, (batch) => parentPort.postMessage(batch)).then((producer) => {
  parentPort.postMessage('ready');
  parentPort.on('message', (message) => message === 'close' ? producer.close().then(() => parentPort.postMessage('closed')) : producer.send(message.topic, message.batch, message.records));
});`;

function records(): WireRecord[] {
  return Array.from({ length: RECORDS }, (_, n) => ({
    key: `8d3e1a4c-1111-2222-3333-${String(n % 1000).padStart(12, '0')}`,
    value: JSON.stringify({ id: `0193a1c4-6f1e-7c2a-9b3d-${String(n).padStart(12, '0')}`, type: 'bench.parcel-registered', payload: 'x'.repeat(480) }),
    headers: {
      'outbox-message-id': `0193a1c4-6f1e-7c2a-9b3d-${String(n).padStart(12, '0')}`,
      'outbox-event-type': 'bench.parcel-registered',
      'outbox-event-version': '1',
      'outbox-aggregate-type': 'parcel',
      'outbox-aggregate-id': `8d3e1a4c-1111-2222-3333-${String(n % 1000).padStart(12, '0')}`,
      'outbox-occurred-at': '2026-11-26T18:00:00.000Z',
    },
  }));
}

/** Sends every record in batches, IN_FLIGHT unacknowledged at most; resolves msg/s and the sending thread's µs per record. */
async function drive(send: (batch: number, slice: WireRecord[]) => void, acknowledged: (handler: (batch: number) => void) => void, all: WireRecord[]) {
  const batches = Math.ceil(all.length / BATCH);
  let next = 0;
  let done = 0;
  let sendingMs = 0;
  const began = performance.now();
  await new Promise<void>((resolve) => {
    const sendNext = () => {
      const slice = all.slice(next * BATCH, (next + 1) * BATCH);
      const start = performance.now();
      send(next++, slice);
      sendingMs += performance.now() - start;
    };
    acknowledged(() => {
      if (++done === batches) return resolve();
      if (next < batches) sendNext();
    });
    while (next < Math.min(IN_FLIGHT, batches)) sendNext();
  });
  return { perSecond: all.length / ((performance.now() - began) / 1000), sendingUs: (sendingMs * 1000) / all.length };
}

async function main(): Promise<void> {
  const mode = process.env.MODE;
  if (mode === 'main' || mode === 'worker') return console.log(await oneRun(mode));
  console.log(`${fmt(RECORDS, 0)} records of the outbox's shape, batches of ${BATCH}, ${IN_FLIGHT} in flight, Kafka test broker, acks -1, each run a fresh process:`);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const each of ['main', 'worker']) {
      const run = spawnSync(process.execPath, [__filename], { env: { ...process.env, MODE: each }, encoding: 'utf8' });
      const fatal = /FATAL ERROR: (.*)/.exec(run.stderr)?.[1];
      if (run.status === 0) console.log(`- round ${round}, ${run.stdout.trim()}`);
      else if (fatal) console.log(`- round ${round}, producer on a ${each === 'main' ? 'sending' : 'worker'} thread: the process aborted (exit ${run.status ?? run.signal}): ${fatal}`);
      else throw new Error(`the ${each} run failed: ${run.stderr}`);
    }
  }
}

async function oneRun(mode: 'main' | 'worker'): Promise<string> {
  const brokers = benchServices().kafkaBrokers.join(',');
  const warmer = await connectedProducer(benchServices().kafkaBrokers, 'worker-warmer');
  const topic = `bench-worker-${suffix()}`;
  await warmTopic(warmer, topic);
  await warmer.disconnect();
  const all = records();
  if (mode === 'main') {
    type Opened = { send(topic: string, batch: number, records: WireRecord[]): void; close(): Promise<void> };
    const open = new Function('module', 'require', `${producerCode}; return module.exports;`)({}, require) as (brokers: string, onBatch: (batch: number) => void) => Promise<Opened>;
    let onBatch: (batch: number) => void = () => undefined;
    const producer = await open(brokers, (batch) => onBatch(batch));
    const result = await drive((batch, slice) => producer.send(topic, batch, slice), (handler) => (onBatch = handler), all);
    await producer.close();
    return `producer on the sending thread: ${fmt(result.perSecond, 0)} msg/s; the sending thread ${fmt(result.sendingUs, 2)} µs per record (produce())`;
  }
  const worker = new Worker(workerCode, { eval: true, workerData: { brokers } });
  let onWorkerBatch: (batch: number) => void = () => undefined;
  await new Promise<void>((resolve) => worker.once('message', () => resolve()));
  worker.on('message', (batch: number | string) => typeof batch === 'number' && onWorkerBatch(batch));
  const result = await drive((batch, slice) => worker.postMessage({ topic, batch, records: slice }), (handler) => (onWorkerBatch = handler), all);
  worker.postMessage('close');
  await new Promise<void>((resolve) => worker.on('message', (message) => message === 'closed' && resolve()));
  await worker.terminate();
  return `producer on a worker thread: ${fmt(result.perSecond, 0)} msg/s; the sending thread ${fmt(result.sendingUs, 2)} µs per record (postMessage)`;
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
