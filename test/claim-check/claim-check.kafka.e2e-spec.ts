import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { OutboxInbox, OutboxInboxModule, type OutboxEnvelope } from '@nest-outbox/outbox';
import { CLAIM_CHECK_HEADER, ClaimCheckError, type ClaimCheckReference } from '@nest-outbox/outbox/core';
import { DatabasePayloadStore } from '@nest-outbox/outbox/typeorm';
import { outboxDdl } from '@nest-outbox/outbox/migrations';
import { OUTBOX_CONNECTION } from '../../libs/outbox/src/nest/outbox.constants';
import type { SqlConnection } from '../../libs/outbox/src/core/sql-connection.port';
import { KafkaTopicReader } from '../support/kafka-topic.reader';
import { Parcel } from '../support/parcel.fixtures';
import { postgresAdmin } from '../support/databases';
import { requireService } from '../support/services';
import { waitFor } from '../support/wait-for';
import { walSandbox, type WalApp, type WalSandbox } from '../support/wal.harness';
import { DELIVERY_MODES, kafkaClientModule, largeDocument, LargeDocumentReader, sha256 } from './claim-check.fixtures';

describe.each(DELIVERY_MODES)('claim check, PostgreSQL → Kafka test broker, $name', ({ name, options }) => {
  const suffix = randomBytes(4).toString('hex');
  const topic = `claim-check-${suffix}`;
  let sandbox: WalSandbox;
  let reader: KafkaTopicReader;
  let app: WalApp;
  let pg: Client;

  beforeAll(async () => {
    const brokers = requireService('kafka').split(',');
    sandbox = await walSandbox('claim_check');
    // The inbox's tables, in the same schema (the app's search_path): the consumer here shares the producer's database.
    const { up } = outboxDdl({ dialect: 'postgres', tables: ['inbox', 'poison'] });
    await postgresAdmin(sandbox.url, [`SET search_path TO ${sandbox.schema}`, ...up].join(';\n'));
    reader = new KafkaTopicReader(brokers, topic);
    await reader.start();
    app = await sandbox.start(
      { transport: 'KAFKA', resolveTopic: () => topic, claimCheck: true, ...options },
      {
        imports: [
          kafkaClientModule(`cc-${suffix}`, brokers),
          OutboxInboxModule.forRoot({ pruneIntervalMs: 0, replayPollMs: 0 }),
        ],
        providers: [LargeDocumentReader],
      },
    );
    pg = new Client({ connectionString: sandbox.url, options: `-c search_path=${sandbox.schema}` });
    await pg.connect();
  }, 60_000);

  afterAll(async () => {
    await pg?.end();
    await reader?.stop();
    await sandbox?.drop();
  });

  const storedPayloads = async () => Number((await pg.query('SELECT count(*) AS n FROM outbox_messages_payloads')).rows[0].n);

  it('publishes a 5 MB payload as a reference that the inbox and a plain kafkajs consumer read back whole', async () => {
    const document = largeDocument();
    const json = JSON.stringify(document);
    expect(Buffer.byteLength(json)).toBeGreaterThan(5_000_000);
    const aggregateId = `doc-${name.length}-${suffix}`;
    await app.dataSource.transaction((manager) => app.publisher.add(manager, { type: 'documents.scanned', aggregateType: 'document', aggregateId, payload: document }));

    await waitFor('the reference on the topic', () => reader.forKey(aggregateId).length >= 1, 30_000);
    const [record] = reader.forKey(aggregateId);
    // The message is small: the reference, not the payload.
    expect(JSON.stringify(record.value).length).toBeLessThan(4_096);
    const reference = JSON.parse(record.headers[CLAIM_CHECK_HEADER]) as ClaimCheckReference;
    expect(reference).toEqual({ store: 'database', location: 'outbox_messages_payloads', key: expect.any(String), sha256: sha256(json), bytes: Buffer.byteLength(json) });
    expect(record.value.payload).toEqual({ outboxClaimCheck: reference });
    expect((record.value.headers as Record<string, string>)[CLAIM_CHECK_HEADER]).toBe(record.headers[CLAIM_CHECK_HEADER]);

    // A consumer in any language, as docs/claim-check.md says: read the row the reference names, check its digest.
    const { rows } = await pg.query(`SELECT payload FROM ${reference.location} WHERE payload_key = $1`, [reference.key]);
    expect(rows).toHaveLength(1);
    expect(sha256(rows[0].payload)).toBe(reference.sha256);
    expect(JSON.parse(rows[0].payload)).toEqual(document);

    // The inbox, through an @Idempotent() handler: it gets the payload, not the reference.
    const handler = app.module.get(LargeDocumentReader);
    await handler.handle(record.value as unknown as OutboxEnvelope);
    expect(handler.received).toHaveLength(1);
    expect(handler.received[0].payload).toEqual(document);
  });

  it('leaves no stored payload when the transaction rolls back', async () => {
    const before = await storedPayloads();
    const parcel = Parcel.register(`rolled-back-${suffix}`, 1);
    await expect(
      app.dataSource.transaction(async (manager) => {
        await manager.save(parcel);
        await app.publisher.add(manager, { type: 'documents.scanned', aggregateType: 'document', aggregateId: parcel.id, payload: largeDocument() });
        throw new Error('the business rule failed');
      }),
    ).rejects.toThrow('the business rule failed');
    expect(await storedPayloads()).toBe(before);
    expect((await pg.query('SELECT count(*) AS n FROM parcels WHERE id = $1', [parcel.id])).rows[0].n).toBe('0');
  });

  it('removes a published payload at retention, and the inbox then fails naming the reference instead of handing over an empty event', async () => {
    const document = { note: 'x'.repeat(300_000) };
    const aggregateId = `retained-${suffix}`;
    await app.dataSource.transaction((manager) => app.publisher.add(manager, { type: 'documents.scanned', aggregateType: 'document', aggregateId, payload: document }));
    await waitFor('the reference on the topic', () => reader.forKey(aggregateId).length >= 1, 30_000);
    const [record] = reader.forKey(aggregateId);
    const reference = JSON.parse(record.headers[CLAIM_CHECK_HEADER]) as ClaimCheckReference;
    // The table mode's row is published by now, the WAL mode's message has no row: both are past a retention of 0 ms.
    await waitFor('the row settled', async () => (await pg.query(`SELECT 1 FROM outbox_messages WHERE id = $1 AND status = 'pending'`, [reference.key])).rowCount === 0);
    const deleted = await new DatabasePayloadStore('outbox_messages').deleteExpired(app.module.get<SqlConnection>(OUTBOX_CONNECTION), 0, 1_000);
    expect(deleted).toBeGreaterThanOrEqual(1);
    expect((await pg.query('SELECT 1 FROM outbox_messages_payloads WHERE payload_key = $1', [reference.key])).rowCount).toBe(0);

    const inbox = app.module.get(OutboxInbox);
    const failure = inbox.resolvePayload(structuredClone(record.value) as unknown as OutboxEnvelope);
    await expect(failure).rejects.toBeInstanceOf(ClaimCheckError);
    await expect(failure).rejects.toThrow(`"database:outbox_messages_payloads/${reference.key}" is not in its store`);
  });
});

describe('a payload over the broker limit without a claim check, PostgreSQL → Kafka test broker', () => {
  let sandbox: WalSandbox;
  let app: WalApp;

  beforeAll(async () => {
    const brokers = requireService('kafka').split(',');
    sandbox = await walSandbox('claim_check_off');
    app = await sandbox.start(
      { transport: 'KAFKA', delivery: 'table', defaultTopic: `claim-check-off-${randomBytes(4).toString('hex')}` },
      { imports: [kafkaClientModule('cc-off', brokers)] },
    );
  }, 60_000);

  afterAll(async () => {
    await sandbox?.drop();
  });

  it('is refused at save, naming the limit and the option, with nothing committed', async () => {
    const parcel = Parcel.register('too-large', 1);
    await expect(
      app.dataSource.transaction(async (manager) => {
        await manager.save(parcel);
        await app.publisher.add(manager, { type: 'documents.scanned', aggregateType: 'document', aggregateId: parcel.id, payload: largeDocument() });
      }),
    ).rejects.toThrow(/over the limit of 1048576 bytes \(option "maxPayloadBytes"\).*"claimCheck"/);
    expect(await app.dataSource.query('SELECT count(*)::int AS n FROM parcels WHERE id = $1', [parcel.id])).toEqual([{ n: 0 }]);
    expect(await app.dataSource.query('SELECT count(*)::int AS n FROM outbox_messages')).toEqual([{ n: 0 }]);
    expect(await app.dataSource.query('SELECT count(*)::int AS n FROM outbox_messages_payloads')).toEqual([{ n: 0 }]);
  });
});
