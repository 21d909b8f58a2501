import type { Client } from 'pg';
import type { Producer } from 'kafkajs';
import { connectedProducer, warmTopic } from './support/env';
import { pidCpuMs, processCpuMs } from './support/cpu';
import { OUTBOX_DEFAULTS } from './support/outbox';
import type { BenchContext } from './support/report';
import { type Backlog, recordOfRow, seedOutboxTable } from './support/seed';
import { fmt, median } from './support/stats';
import { rawLibrdkafkaRun, type RawRecord } from './support/raw-librdkafka';

/**
 * How many batches the relays keep in flight by default (`maxBatchesInFlight`, and the WAL
 * stream's): the raw producers run at it, and every ratio to a raw producer is taken against that row.
 */
export const RELAY_IN_FLIGHT = OUTBOX_DEFAULTS.maxBatchesInFlight;
export const IN_FLIGHT_COUNTS = [1, RELAY_IN_FLIGHT] as const;

export const RAW_KAFKAJS = (inFlight: number) =>
  `raw kafkajs \`producer.send\`, batches of 100, ${inFlight} in flight${inFlight === RELAY_IN_FLIGHT ? ' (the relays\' concurrency: every ratio to raw kafkajs is to this row)' : ' (one at a time: the ratios of earlier reports were to this row)'}`;
export const RAW_LIBRDKAFKA = (inFlight: number) =>
  `raw librdkafka (\`@confluentinc/kafka-javascript\` producer, the transport's settings), batches of 100, ${inFlight} in flight${inFlight === RELAY_IN_FLIGHT ? ' (the relays\' concurrency)' : ''}`;

export interface RawProducerRuns {
  /** msg/s per round, by batches in flight. */
  kafkajs: Map<number, number[]>;
  librdkafka: Map<number, number[]>;
  /** CPU of the sender and of the broker during each kafkajs run. */
  cpu: string[];
}

/**
 * The ceilings: the backlog's records, read from a seeded table into memory, sent by plain
 * producers (no outbox code) in batches of the relay's size, one batch in flight and as many as
 * the relays keep. Each producer and concurrency sends to a topic of its own, warmed first.
 */
export async function rawProducerRuns(context: BenchContext, admin: Client, schema: string, freshTable: () => Promise<string>, run: string, backlog: Backlog): Promise<RawProducerRuns> {
  const { services, sizes } = context;
  const result: RawProducerRuns = { kafkajs: new Map(IN_FLIGHT_COUNTS.map((n) => [n, []])), librdkafka: new Map(IN_FLIGHT_COUNTS.map((n) => [n, []])), cpu: [] };
  for (let round = 1; round <= sizes.rounds; round++) {
    const rawTable = await freshTable();
    const topic = `bench-p1-raw-${run}-${round}`;
    await seedOutboxTable(admin, schema, rawTable, topic, backlog);
    const records: RawRecord[] = (await admin.query(`SELECT * FROM "${rawTable}" ORDER BY position`)).rows.map(recordOfRow);
    await admin.query(`DROP TABLE "${rawTable}"`);
    const producer = await connectedProducer(services.kafkaBrokers, `bench-p1-raw-${run}`);
    try {
      for (const inFlight of IN_FLIGHT_COUNTS) {
        const { perSecond, cpu } = await rawKafkajsRun(producer, `${topic}-kafkajs-${inFlight}`, records, inFlight);
        result.kafkajs.get(inFlight)!.push(perSecond);
        result.cpu.push(`raw kafkajs, ${inFlight} in flight, round ${round}: ${cpu}`);
      }
    } finally {
      await producer.disconnect();
    }
    for (const [inFlight, runs] of result.librdkafka) runs.push(await rawLibrdkafkaRun(services.kafkaBrokers, `${topic}-librdkafka-${inFlight}`, records, OUTBOX_DEFAULTS.batchSize, inFlight));
    const line = (name: string, runs: Map<number, number[]>) => `${name} ${[...runs].map(([n, r]) => `${n} in flight ${fmt(r.at(-1))}`).join(', ')}`;
    context.log(`P1 raw producers round ${round}, msg/s: ${line('kafkajs', result.kafkajs)}; ${line('librdkafka', result.librdkafka)}`);
  }
  return result;
}

/** One kafkajs producer sending `records` in batches of the relay's size, `inFlight` sends at a time (each a lane taking the next batch). */
async function rawKafkajsRun(producer: Producer, topic: string, records: RawRecord[], inFlight: number): Promise<{ perSecond: number; cpu: string }> {
  await warmTopic(producer, topic);
  const brokerPid = Number(process.env.OUTBOX_TEST_KAFKA_MOCK_PID);
  const cpuBefore = { sender: processCpuMs(), broker: brokerPid ? pidCpuMs(brokerPid) : Number.NaN };
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    while (next < records.length) {
      const from = next;
      next += OUTBOX_DEFAULTS.batchSize;
      await producer.send({ topic, acks: -1, messages: records.slice(from, from + OUTBOX_DEFAULTS.batchSize) });
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  const ms = performance.now() - started;
  const share = (used: number) => fmt((used / ms) * 100, 0);
  return {
    perSecond: records.length / (ms / 1000),
    cpu: `sender ${share(processCpuMs() - cpuBefore.sender)} %, Kafka test broker ${share(brokerPid ? pidCpuMs(brokerPid) - cpuBefore.broker : Number.NaN)} %`,
  };
}

/** The median of each concurrency's rounds. */
export function medians(runs: Map<number, number[]>): Map<number, number> {
  return new Map([...runs].map(([inFlight, values]) => [inFlight, median(values)]));
}
