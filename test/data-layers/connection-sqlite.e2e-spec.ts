import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { Test, type TestingModule } from '@nestjs/testing';
import { Kysely, SqliteDialect } from 'kysely';
import { OutboxModule, OutboxPublisher, OutboxRelayHost } from '@nest-outbox/outbox';
import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import { tableDialectFor } from '../../libs/outbox/src/sql/outbox-sql.factory';
import { silentLogger } from '../support/silent-logger';
import { waitFor } from '../support/wait-for';
import type { BillingDatabase } from './examples/kysely.example';

/**
 * SQLite without TypeORM: Kysely writes on its better-sqlite3 connection, the module relays on one
 * of its own to the same file (`connection: { url: 'sqlite:…' }`). SQLite lets one writer in at a
 * time: the relay must wait for the app's open transaction without blocking the event loop the
 * app needs to finish it.
 */
describe('OutboxModule with connection: { url: sqlite: }, Kysely on the same file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'outbox-conn-sqlite-'));
  const path = join(dir, 'app.sqlite');
  const transport = new RecordingOutboxTransport();
  let db: Kysely<BillingDatabase>;
  let module: TestingModule | undefined;
  const event = (aggregateId: string) => ({ type: 'billing.invoice-issued', aggregateType: 'invoice', aggregateId, payload: { aggregateId }, topic: 'billing' });
  const published = (aggregateId: string) => transport.published.filter((message) => message.key === aggregateId);

  beforeAll(async () => {
    const setup = new Database(path);
    for (const sql of ['CREATE TABLE invoices (id text PRIMARY KEY, status text NOT NULL)', ...tableDialectFor('better-sqlite3', 'outbox_messages').createTable()]) setup.exec(sql);
    setup.close();
    db = new Kysely<BillingDatabase>({ dialect: new SqliteDialect({ database: new Database(path) }) });
    // Polls rarely: the tests drive the relay with publishBatch().
    module = await Test.createTestingModule({ imports: [OutboxModule.forRoot({ connection: { url: `sqlite:${path}` }, transport, pollIntervalMs: 60_000 })] })
      .setLogger(silentLogger)
      .compile();
    await module.init();
  });

  afterAll(async () => {
    await module?.close();
    await db?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('publishes what a Kysely transaction committed, nothing of one that rolled back', async () => {
    const outbox = module!.get(OutboxPublisher);
    const [committed, rolledBack] = [`inv-${randomUUID()}`, `inv-${randomUUID()}`];
    await db.transaction().execute((trx) => outbox.add(trx, event(committed)));
    await expect(
      db.transaction().execute(async (trx) => {
        await outbox.add(trx, event(rolledBack));
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    await waitFor('the committed event published', async () => (await module!.get(OutboxRelayHost).publishBatch(), published(committed).length === 1));
    expect(published(rolledBack)).toEqual([]);
  });

  it('waits for an open app transaction without blocking it: the claim goes through once the app commits', async () => {
    const outbox = module!.get(OutboxPublisher);
    const id = `inv-${randomUUID()}`;
    let commit!: () => void;
    const committing = new Promise<void>((resolve) => (commit = resolve));
    let added = false;
    const transaction = db.transaction().execute(async (trx) => {
      await trx.insertInto('invoices').values({ id, status: 'issued' }).execute();
      await outbox.add(trx, event(id));
      added = true;
      await committing;
    });
    await waitFor('the app transaction to hold the write lock', () => added);
    // The claim meets the app's lock: it must wait asynchronously, so that the app can commit meanwhile.
    const batch = module!.get(OutboxRelayHost).publishBatch();
    commit();
    await transaction;
    expect((await batch).published).toBe(1);
    expect(published(id)).toHaveLength(1);
  });
});
