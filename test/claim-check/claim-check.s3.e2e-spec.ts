import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { Client } from 'pg';
import { OutboxInboxModule, type OutboxEnvelope } from '@nest-outbox/outbox';
import { CLAIM_CHECK_HEADER, type ClaimCheckReference } from '@nest-outbox/outbox/core';
import { outboxDdl } from '@nest-outbox/outbox/migrations';
import { OutboxCleanupHost } from '../../libs/outbox/src/nest/outbox-cleanup.host';
import { KafkaTopicReader } from '../support/kafka-topic.reader';
import { Parcel } from '../support/parcel.fixtures';
import { postgresAdmin } from '../support/databases';
import { requireService } from '../support/services';
import { waitFor } from '../support/wait-for';
import { walSandbox, type WalApp, type WalSandbox } from '../support/wal.harness';
import { freePort } from '../support/free-port';
import { DELIVERY_MODES, kafkaClientModule, largeDocument, LargeDocumentReader, sha256 } from './claim-check.fixtures';

// s3rver ships no types: the two methods the test uses.
const S3rver = require('s3rver') as new (options: Record<string, unknown>) => { run(): Promise<unknown>; close(): Promise<void> };

const BUCKET = 'outbox-claim-check';

describe.each(DELIVERY_MODES)('claim check in S3 (s3rver), PostgreSQL → Kafka test broker, $name', ({ options }) => {
  const suffix = randomBytes(4).toString('hex');
  const topic = `claim-check-s3-${suffix}`;
  let s3Config: { region: string; endpoint: string; forcePathStyle: true; credentials: { accessKeyId: string; secretAccessKey: string } };
  const directory = mkdtempSync(join(tmpdir(), 'claim-check-s3-'));
  let server: InstanceType<typeof S3rver>;
  let s3: S3Client;
  let sandbox: WalSandbox;
  let reader: KafkaTopicReader;
  let app: WalApp;
  let pg: Client;

  beforeAll(async () => {
    const port = await freePort();
    s3Config = { region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } };
    server = new S3rver({ address: '127.0.0.1', port, silent: true, directory, configureBuckets: [{ name: BUCKET }] });
    await server.run();
    s3 = new S3Client(s3Config);
    const brokers = requireService('kafka').split(',');
    sandbox = await walSandbox('claim_check_s3');
    const { up } = outboxDdl({ dialect: 'postgres', tables: ['inbox', 'poison'] });
    await postgresAdmin(sandbox.url, [`SET search_path TO ${sandbox.schema}`, ...up].join(';\n'));
    reader = new KafkaTopicReader(brokers, topic);
    await reader.start();
    app = await sandbox.start(
      // A grace of 1 ms: any object without a row when cleanup runs counts as an orphan (the test runs one transaction at a time).
      { transport: 'KAFKA', resolveTopic: () => topic, claimCheck: { store: 's3', bucket: BUCKET, s3Config, orphanGraceMs: 1 }, ...options },
      {
        imports: [
          kafkaClientModule(`cc-s3-${suffix}`, brokers),
          OutboxInboxModule.forRoot({ pruneIntervalMs: 0, replayPollMs: 0, claimCheck: { outboxTable: false, bucket: BUCKET, s3Config } }),
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
    s3?.destroy();
    await server?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const objectKeys = async () => ((await s3.send(new ListObjectsV2Command({ Bucket: BUCKET }))).Contents ?? []).map((object) => object.Key!).sort();

  it('publishes a 5 MB payload as a reference to an object that the inbox and a plain consumer read back whole', async () => {
    const document = largeDocument();
    const json = JSON.stringify(document);
    const aggregateId = `doc-${suffix}`;
    await app.dataSource.transaction((manager) => app.publisher.add(manager, { type: 'documents.scanned', aggregateType: 'document', aggregateId, payload: document }));

    await waitFor('the reference on the topic', () => reader.forKey(aggregateId).length >= 1, 30_000);
    const [record] = reader.forKey(aggregateId);
    const reference = JSON.parse(record.headers[CLAIM_CHECK_HEADER]) as ClaimCheckReference;
    expect(reference).toEqual({ store: 's3', location: BUCKET, key: expect.stringMatching(/^outbox-payloads\/[0-9a-f-]{36}$/), sha256: sha256(json), bytes: Buffer.byteLength(json) });
    expect(record.value.payload).toEqual({ outboxClaimCheck: reference });

    // A plain consumer, as docs/claim-check.md says: GetObject(bucket = location, key), then check the digest.
    const object = await s3.send(new GetObjectCommand({ Bucket: reference.location, Key: reference.key }));
    const fetched = await object.Body!.transformToString('utf8');
    expect(sha256(fetched)).toBe(reference.sha256);
    expect(JSON.parse(fetched)).toEqual(document);

    const handler = app.module.get(LargeDocumentReader);
    await handler.handle(record.value as unknown as OutboxEnvelope);
    expect(handler.received.map((envelope) => envelope.payload)).toEqual([document]);
  });

  it('leaves an orphan when the transaction rolls back, which cleanup collects, and keeps the committed objects', async () => {
    const committed = await objectKeys();
    const parcel = Parcel.register(`rolled-back-${suffix}`, 1);
    await expect(
      app.dataSource.transaction(async (manager) => {
        await manager.save(parcel);
        await app.publisher.add(manager, { type: 'documents.scanned', aggregateType: 'document', aggregateId: parcel.id, payload: largeDocument() });
        throw new Error('the business rule failed');
      }),
    ).rejects.toThrow('the business rule failed');
    // The object was put before the commit that never came; its row went with the rollback.
    const afterRollback = await objectKeys();
    expect(afterRollback).toHaveLength(committed.length + 1);
    const orphan = afterRollback.find((key) => !committed.includes(key))!;
    expect((await pg.query('SELECT 1 FROM outbox_messages_payloads WHERE payload_key = $1', [orphan.slice('outbox-payloads/'.length)])).rowCount).toBe(0);

    // Cleanup runs until the object is past the 1 ms grace by the S3 server's clock, which stamps it.
    let collected = 0;
    await waitFor('cleanup to collect the orphan', async () => (collected += (await app.module.get(OutboxCleanupHost).runNow()).orphans ?? 0) > 0);
    expect(collected).toBe(1);
    expect(await objectKeys()).toEqual(committed);
  });
});
