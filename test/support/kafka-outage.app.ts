import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModuleMetadata } from '@nestjs/common';
import type { TestingModule } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { OutboxModule, type OutboxModuleOptions } from '@nest-outbox/outbox';
import { startTestingModule } from './capturing-app';
import { KafkaTopicReader, type ConsumedRecord } from './kafka-topic.reader';
import { Parcel } from './parcel.fixtures';
import { parcelsOnSqlite } from './sqlite-parcels';
import { closeAll } from './teardown';
import { waitFor } from './wait-for';

/** A relaying app of a broker-outage test, on a SQLite file of its own. */
export interface OutageApp {
  module: TestingModule;
  dataSource: DataSource;
  close(): Promise<void>;
}

/**
 * Starts an app that relays the parcels' events to `topic` through `transport` (a transport, or
 * the name of a client that `imports` registers), tuned to ride out an outage: polls every 200 ms,
 * backs off 200 ms–1 s without jitter, and gives a publish 3 s before counting it failed.
 */
export async function startOutageApp(name: string, topic: string, transport: OutboxModuleOptions['transport'], imports: NonNullable<ModuleMetadata['imports']> = []): Promise<OutageApp> {
  const dir = mkdtempSync(join(tmpdir(), `outbox-${name}-`));
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  let module: TestingModule;
  try {
    module = await startTestingModule({
      imports: [
        parcelsOnSqlite(dir),
        ...imports,
        OutboxModule.forRoot({ transport, resolveTopic: () => topic, pollIntervalMs: 200, backoff: { initialMs: 200, maxMs: 1_000, jitter: 0 }, publishTimeoutMs: 3_000 }),
      ],
    });
  } catch (error) {
    removeDir();
    throw error;
  }
  return { module, dataSource: module.get(DataSource), close: () => closeAll(() => module.close(), removeDir) };
}

/**
 * Saves a parcel and waits for its one record, read by a reader of its own that is stopped before
 * the outage: a kafkajs 2.2.4 consumer that lives through a broker restart leaves its LeaveGroup
 * connection open when it disconnects. Returns the parcel and its record.
 */
export async function publishedBeforeOutage(app: OutageApp, brokers: string[], topic: string): Promise<{ parcel: Parcel; record: ConsumedRecord }> {
  const reader = new KafkaTopicReader(brokers, topic);
  try {
    await reader.start();
    const parcel = Parcel.register('before', 1);
    await app.dataSource.getRepository(Parcel).save(parcel);
    const [record] = await waitFor('the event saved before the outage', () => reader.forKey(parcel.id).length === 1 && reader.forKey(parcel.id), 20_000);
    return { parcel, record };
  } finally {
    await reader.stop();
  }
}
