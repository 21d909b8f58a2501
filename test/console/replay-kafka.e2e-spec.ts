import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { logLevel } from 'kafkajs';
import { ClientProxyFactory, Transport, type ClientKafka } from '@nestjs/microservices';
import { Pool } from 'pg';
import { OutboxDataLayerInbox } from '@nest-outbox/outbox';
import { ClientProxyTransport } from '../../libs/outbox/src/transports/client-proxy.transport';
import { inboxDialectFor } from '../../libs/outbox/src/sql/inbox/inbox-sql.dialect';
import { createConsoleHarness, type ConsoleHarness } from '../support/console.harness';
import { KafkaTopicReader, type ConsumedRecord } from '../support/kafka-topic.reader';
import { isolatedDatabase } from '../support/outbox-harness';
import { requireService } from '../support/services';
import { waitFor } from '../support/wait-for';
import { closeAll } from '../support/teardown';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

/** `nest-outbox …` as a process: the CLI's entry, run from source as the built bin runs it from dist. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const entry = join(root, 'libs', 'outbox', 'src', 'cli', 'outbox-cli.main.ts');
  try {
    const { stdout, stderr } = await run(process.execPath, ['-r', join(root, 'test', 'support', 'ts-child.register.cjs'), entry, ...args], {
      env: { ...process.env, OUTBOX_DATABASE_URL: '' },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/**
 * Replay end to end on the Kafka test broker: events published by the relay and consumed through
 * two inboxes, one of which then loses its database; a replay by filter from the CLI process sends
 * them again with their ids, in their original order (and before a newer event that was waiting),
 * with the reason as a header and in `show`. The inbox that kept its marks drops the replays as
 * duplicates; the one that lost them applies them in order.
 */
describe('replay of published messages through the CLI, on Kafka, to inbox consumers (PostgreSQL)', () => {
  const topic = `replay-${randomBytes(5).toString('hex')}`;
  let h: ConsoleHarness;
  let proxy: ClientKafka;
  let reader: KafkaTopicReader;
  let consumerDb: Awaited<ReturnType<typeof isolatedDatabase>>;
  let pool: Pool;
  const inbox = new OutboxDataLayerInbox();
  const applied: Record<'kept' | 'wiped', string[]> = { kept: [], wiped: [] };
  let handled = 0;

  beforeAll(async () => {
    h = await createConsoleHarness('postgres');
    const brokers = requireService('kafka').split(',');
    proxy = ClientProxyFactory.create({
      transport: Transport.KAFKA,
      options: { client: { clientId: `replay-${topic}`, brokers, logLevel: logLevel.NOTHING }, producerOnlyMode: true, send: { acks: -1 } },
    }) as ClientKafka;
    reader = new KafkaTopicReader(brokers, topic);
    await reader.start();
    consumerDb = await isolatedDatabase('postgres');
    const { url, schema } = consumerDb.options as { url: string; schema: string };
    pool = new Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 2 });
    for (const sql of inboxDialectFor('postgres', 'outbox_inbox').createTable()) await pool.query(sql);
  }, 60_000);

  afterAll(() => closeAll(() => reader?.stop(), () => proxy?.close(), () => h?.close(), () => pool?.end(), () => consumerDb?.drop()));

  // The consumers: every record in the order received, through each one's inbox, in a transaction of its database.
  async function consume(): Promise<void> {
    for (; handled < reader.records.length; handled++) {
      const envelope = reader.records[handled].value as { id: string };
      for (const consumer of ['kept', 'wiped'] as const) {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          await inbox.process(client, envelope, `shipping-${consumer}`, () => applied[consumer].push(envelope.id));
          await client.query('COMMIT');
        } finally {
          client.release();
        }
      }
    }
  }
  async function publishAll(owner: string): Promise<void> {
    const relay = h.relay(owner, new ClientProxyTransport(proxy));
    while ((await relay.publishBatch()).claimed > 0);
  }
  const event = (aggregateId: string, n: number) => ({ type: `orders.step-${n}`, aggregateType: 'order', aggregateId, payload: { n }, topic });
  const ofOrder = (records: ConsumedRecord[]) => records.filter((r) => r.key === 'o-1').map((r) => (r.value as { id: string }).id);

  it('sends the lost events again with their ids, in order; the inbox that has them drops them, the wiped one applies them', async () => {
    const schema = (await h.dataSource.query('SELECT current_schema() AS s'))[0].s as string;
    const db = ['--url', requireService('postgres'), '--schema', schema];
    const since = new Date(Date.now() - 60_000).toISOString();
    const o1 = await h.add([event('o-1', 1), event('o-1', 2), event('o-1', 3)]);
    const [o2] = await h.add([event('o-2', 1)]);
    await publishAll('first');
    await waitFor('the four events at the consumer', () => reader.records.length === 4, 30_000);
    await consume();
    expect(applied.kept.filter((id) => o1.includes(id))).toEqual(o1);

    // The shipping service's database is restored from an old backup: its inbox and its state lose the events.
    await pool.query(`DELETE FROM outbox_inbox WHERE consumer = 'shipping-wiped'`);
    applied.wiped.length = 0;
    // Meanwhile a newer event of the same order waits in the outbox (its relay is paused, say).
    const [newer] = await h.add([event('o-1', 4)]);

    const filter = ['--aggregate-type', 'order', '--aggregate-id', 'o-1', '--destination', topic, '--since', since, '--until', new Date(Date.now() + 60_000).toISOString()];
    const refusedReason = await cli('replay', ...db, ...filter);
    expect(refusedReason).toMatchObject({ code: 2, stderr: expect.stringContaining('"replay" needs --reason "<why>"') });
    const refusedFilter = await cli('replay', ...db, '--reason', 'x');
    expect(refusedFilter).toMatchObject({ code: 2, stderr: expect.stringContaining('pass --all') });
    const badTime = await cli('replay', ...db, '--since', 'yesterday', '--reason', 'x');
    expect(badTime).toMatchObject({ code: 2, stderr: expect.stringContaining('--since "yesterday" is refused: expected an ISO-8601 time') });

    const dry = await cli('replay', ...db, ...filter, '--reason', 'shipping restored an old backup', '--dry-run');
    expect(dry).toMatchObject({ code: 0, stdout: '3 published message(s) match; nothing replayed (dry run).\n' });
    const done = await cli('replay', ...db, ...filter, '--reason', 'shipping restored an old backup', '--by', 'ops-alice');
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(/^3 message\(s\) replayed \(replay [0-9a-f-]{36}, reason "shipping restored an old backup"\)/);

    await publishAll('after');
    await waitFor('the replays and the newer event at the consumer', () => reader.records.length === 8, 30_000);
    await consume();
    // On the broker: the first three, then the same three again with their ids, then the newer one.
    expect(ofOrder(reader.records)).toEqual([...o1, ...o1, newer]);
    const replays = reader.records.filter((r) => r.key === 'o-1').slice(3, 6);
    for (const record of replays) {
      expect(record.headers).toMatchObject({ 'outbox-replay-reason': 'shipping restored an old backup', 'outbox-replayed-by': 'ops-alice (nest-outbox)' });
    }
    expect(reader.records.filter((r) => r.key === 'o-2').map((r) => (r.value as { id: string }).id)).toEqual([o2]);
    // The inbox that kept its marks drops the replays; the wiped one applies them, in order, then the newer one.
    expect(applied.kept.filter((id) => id !== o2)).toEqual([...o1, newer]);
    expect(applied.wiped).toEqual([...o1, newer]);

    const shown = await cli('show', o1[0], ...db);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      id: o1[0],
      status: 'published',
      headers: { 'outbox-replay-reason': 'shipping restored an old backup', 'outbox-replayed-by': 'ops-alice (nest-outbox)', 'outbox-replayed-at': expect.any(String) },
    });
  });
});
