import { randomUUID } from 'node:crypto';
import { Test } from '@nestjs/testing';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import {
  createSqlOutboxStore,
  DataLayerInbox,
  OutboxModule,
  OutboxPublisher,
  OutboxRelay,
  RecordingOutboxTransport,
  RetryPolicy,
  type DataLayerTransaction,
} from '@nest-outbox/outbox';

const silent = { log: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * What proves that a migration made the right tables: an event added in a transaction of the data
 * layer, through `OutboxPublisher.add`, is claimed and published by a relay, and the inbox marks a
 * message once. The module runs no migration: the tables are the ones the data layer's tool made.
 */
export async function proveTables(
  database: Partial<DataSourceOptions>,
  inTransaction: (work: (tx: DataLayerTransaction) => Promise<void>) => Promise<void>,
  { schema, inboxTable = 'outbox_inbox' }: { schema?: string; inboxTable?: string } = {},
): Promise<{ published: unknown[]; duplicate: boolean }> {
  const module = await Test.createTestingModule({
    imports: [TypeOrmModule.forRoot({ ...database, synchronize: false, migrationsRun: false, logging: false } as TypeOrmModuleOptions), OutboxModule.forRoot({ relay: false, schema })],
  }).compile();
  module.useLogger(false);
  await module.init();
  try {
    const publisher = module.get(OutboxPublisher);
    const aggregateId = `inv-${randomUUID()}`;
    await inTransaction(async (tx) => {
      await publisher.add(tx, { type: 'billing.invoice-issued', aggregateType: 'invoice', aggregateId, payload: { aggregateId }, topic: 'billing' });
    });
    const transport = new RecordingOutboxTransport();
    const relay = new OutboxRelay({
      store: createSqlOutboxStore(module.get(DataSource), { tableName: 'outbox_messages', schema }),
      transports: new Map([['default', transport]]),
      owner: 'migration-proof',
      retryPolicy: new RetryPolicy(3, { initialMs: 50, maxMs: 200, jitter: 0 }),
      batchSize: 10,
      leaseMs: 30_000,
      publishTimeoutMs: 5_000,
      logger: silent,
    });
    await relay.trigger();
    await relay.stop(5_000);
    const inbox = new DataLayerInbox(inboxTable);
    const envelope = { id: randomUUID() };
    await inTransaction(async (tx) => void (await inbox.process(tx, envelope, 'shipping', () => undefined)));
    let duplicate = false;
    await inTransaction(async (tx) => void ({ duplicate } = await inbox.process(tx, envelope, 'shipping', () => undefined)));
    return { published: transport.published.map((message) => ({ aggregateId: message.envelope.aggregateId, payload: message.envelope.payload })), duplicate };
  } finally {
    await module.close();
  }
}
