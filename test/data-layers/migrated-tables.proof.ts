import { randomUUID } from 'node:crypto';
import { Test } from '@nestjs/testing';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { createSqlOutboxStore } from '@nest-outbox/outbox/typeorm';
import { OutboxDataLayerInbox, OutboxModule, OutboxPublisher, type OutboxDataLayerTransaction } from '@nest-outbox/outbox';
import { OutboxRelay, RetryPolicy } from '@nest-outbox/outbox/core';
import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';

const silent = { log: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * What proves that a migration made the right tables: an event added in a transaction of the data
 * layer, through `OutboxPublisher.add`, is claimed and published by a relay, and the inbox marks a
 * message once. The module runs no migration: the tables are the ones the data layer's tool made.
 */
export async function proveTables(
  database: Partial<DataSourceOptions>,
  inTransaction: (work: (tx: OutboxDataLayerTransaction) => Promise<void>) => Promise<void>,
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
    const event = { type: 'billing.invoice-issued', aggregateType: 'invoice', aggregateId, payload: { aggregateId }, topic: 'billing' };
    const dataSource = module.get(DataSource);
    await inTransaction(async (tx) => void (await publisher.add(tx, event)));
    const transport = new RecordingOutboxTransport();
    const relay = new OutboxRelay({
      store: createSqlOutboxStore(dataSource, { tableName: 'outbox_messages', schema }),
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
    const envelope = { id: randomUUID() };
    const layerInbox = new OutboxDataLayerInbox(inboxTable);
    const deliver = async () => {
      let duplicate = false;
      await inTransaction(async (tx) => void ({ duplicate } = await layerInbox.process(tx, envelope, 'shipping', () => undefined)));
      return duplicate;
    };
    expect(await deliver()).toBe(false);
    const duplicate = await deliver();
    return { published: transport.published.map((message) => ({ aggregateId: message.envelope.aggregateId, payload: message.envelope.payload })), duplicate };
  } finally {
    await module.close();
  }
}
