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

/** An outbox row of an outage test, as the tests look at it. */
export interface OutageRow {
  aggregate_id: string;
  event_type: string;
  status: string;
  attempts: number;
  last_error: string | null;
}

/** The outbox rows of these aggregates, in position order. */
export async function outageRows(app: OutageApp, aggregateIds: Set<string>): Promise<OutageRow[]> {
  return ((await app.dataSource.query(`SELECT * FROM outbox_messages ORDER BY position`)) as OutageRow[]).filter((row) => aggregateIds.has(row.aggregate_id));
}

/** Three parcels saved (in one transaction, by the caller) while the broker is down, each registered then relabelled. */
export function parcelsOfTheOutage(): { during: Parcel[]; ids: Set<string> } {
  const during = [Parcel.register('during-a', 2), Parcel.register('during-b', 3), Parcel.register('during-c', 4)];
  for (const parcel of during) parcel.relabel(`${parcel.label}-relabelled`);
  return { during, ids: new Set(during.map((parcel) => parcel.id)) };
}

/**
 * Once the broker is back: waits until every row of the outage is published, then reads the topic
 * with a new reader (handed to `keep` at once, for the caller to stop) until each parcel has both
 * its events. A retry may repeat a message (at least once): the first copies must keep the order of
 * the events, all on one partition. Returns each parcel's records.
 */
export async function drainedAfterOutage(
  app: OutageApp,
  outage: { during: Parcel[]; ids: Set<string> },
  read: { brokers: string[]; topic: string; keep(reader: KafkaTopicReader): void },
): Promise<Map<string, ConsumedRecord[]>> {
  const published = await waitFor('every row of the outage published', async () => {
    const rows = await outageRows(app, outage.ids);
    return rows.every((row) => row.status === 'published') && rows;
  }, 60_000);
  expect(published).toHaveLength(2 * outage.during.length);
  const reader = new KafkaTopicReader(read.brokers, read.topic);
  read.keep(reader);
  await reader.start();
  const recordsOf = new Map<string, ConsumedRecord[]>();
  for (const parcel of outage.during) {
    const records = await waitFor(`both events of ${parcel.label}`, () => reader.forKey(parcel.id).length >= 2 && reader.forKey(parcel.id), 30_000);
    const types = records.map((record) => record.headers['outbox-event-type']);
    expect(types.filter((type, index) => types.indexOf(type) === index)).toEqual(['parcels.parcel-registered', 'parcels.parcel-relabelled']);
    expect(new Set(records.map((record) => record.partition)).size).toBe(1);
    recordsOf.set(parcel.id, records);
  }
  return recordsOf;
}
