import { Client } from 'pg';
import { connectedProducer, sleep, warmTopic } from './env';
import { createOurRelay } from './our-relay';
import { OUTBOX_DEFAULTS } from './outbox';
import { recordOfRow } from './seed';

/** What one contender did within its cap: rows the broker acknowledged and the contender recorded, and the time taken. */
export interface CappedDrain {
  drained: number;
  seconds: number;
  perSecond: number;
  /** True when the cap ended the run before the backlog was empty. */
  capped: boolean;
  /** Claim durations in ms (ours only). */
  claims?: number[];
  /** Durations in ms of every claim, publish call and settle (ours only): where a drain's time goes. */
  phases?: { claim: number[]; publish: number[]; settle: number[] };
}

const result = (drained: number, seconds: number, total: number, claims?: number[]): CappedDrain => ({
  drained,
  seconds,
  perSecond: seconds > 0 ? drained / seconds : 0,
  capped: drained < total,
  claims,
});

export interface DrainTarget {
  postgresUrl: string;
  brokers: string[];
  schema: string;
  /** A library outbox table already holding `total` pending rows for `topic`. */
  table: string;
  topic: string;
  total: number;
  capMs: number;
}

/** Raw kafkajs: the table's records read into memory, then sent in batches of the relay's size, as many in flight as the relay keeps (the ceiling). */
export async function rawKafkajsDrain(admin: Client, target: DrainTarget, clientId: string): Promise<CappedDrain> {
  const records = (await admin.query(`SELECT * FROM "${target.schema}"."${target.table}" ORDER BY position`)).rows.map(recordOfRow);
  const producer = await connectedProducer(target.brokers, clientId);
  try {
    await warmTopic(producer, target.topic);
    // As many sends in flight as the relay keeps batches (P1 measures one and two side by side).
    let next = 0;
    const lane = async () => {
      while (next < records.length) {
        const from = next;
        next += OUTBOX_DEFAULTS.batchSize;
        await producer.send({ topic: target.topic, acks: -1, messages: records.slice(from, from + OUTBOX_DEFAULTS.batchSize) });
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: OUTBOX_DEFAULTS.maxBatchesInFlight }, lane));
    return result(records.length, (performance.now() - started) / 1000, target.total);
  } finally {
    await producer.disconnect();
  }
}

/** The tutorial relay: one transaction per row (`… LIMIT 1 FOR UPDATE SKIP LOCKED`, send, mark, commit), until empty or the cap. */
export async function naiveDrain(target: DrainTarget, clientId: string): Promise<CappedDrain> {
  const client = new Client({ connectionString: target.postgresUrl, options: `-c search_path=${target.schema}` });
  await client.connect();
  const producer = await connectedProducer(target.brokers, clientId);
  let drained = 0;
  try {
    await warmTopic(producer, target.topic);
    const started = performance.now();
    while (performance.now() < started + target.capMs) {
      await client.query('BEGIN');
      const { rows } = await client.query(`SELECT * FROM "${target.table}" WHERE status = 'pending' ORDER BY position LIMIT 1 FOR UPDATE SKIP LOCKED`);
      if (rows.length === 0) {
        await client.query('COMMIT');
        break;
      }
      await producer.send({ topic: rows[0].destination, acks: -1, messages: [recordOfRow(rows[0])] });
      await client.query(`UPDATE "${target.table}" SET status = 'published', published_at = now() WHERE position = $1`, [rows[0].position]);
      await client.query('COMMIT');
      drained++;
    }
    return result(drained, (performance.now() - started) / 1000, target.total);
  } finally {
    await producer.disconnect();
    await client.end();
  }
}

/**
 * Ours (the P1 relay, defaults): `relay.trigger()` until nothing is claimable or the cap, then
 * stopped (it finishes the batch in flight); the rate counts the rows it recorded as published.
 */
export async function ourDrain(admin: Client, target: DrainTarget, owner: string): Promise<CappedDrain> {
  const ours = await createOurRelay({ postgresUrl: target.postgresUrl, schema: target.schema, table: target.table, brokers: target.brokers, owner });
  const publishedRows = async () => Number((await admin.query(`SELECT count(*) AS n FROM "${target.schema}"."${target.table}" WHERE status = 'published'`)).rows[0].n);
  try {
    await warmTopic(await ours.client.connect(), target.topic);
    const started = performance.now();
    let done = false;
    const drain = ours.relay.trigger().finally(() => (done = true));
    while (!done && performance.now() < started + target.capMs) await sleep(50);
    // Stop claiming; a claim or batch in flight finishes (a slow claim can take seconds, hence the long wait).
    await ours.relay.stop(60_000);
    await drain;
    const seconds = (performance.now() - started) / 1000;
    const drained = await publishedRows();
    if (ours.logger.errors > 0) throw new Error(`our relay logged errors: ${ours.logger.first.join('; ')}`);
    return { ...result(drained, seconds, target.total, ours.phases.claim), phases: ours.phases };
  } finally {
    await ours.close();
  }
}
