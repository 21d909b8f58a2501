import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { DataSource } from 'typeorm';
import { CreateOutboxTable, JetStreamTransport, OutboxModule, OutboxPublisher } from '@nest-outbox/outbox';
import { serviceEnv } from '../support/services';
import { waitFor } from '../support/wait-for';

function natsUrl(): string {
  const url = serviceEnv().OUTBOX_TEST_NATS_URL;
  if (!url) throw new Error('NATS is not running for the tests: start it with "bash scripts/services.sh up nats", or run "npm test".');
  return url;
}

/** A broker that refuses a message for good: the row goes dead with the broker's words, the rest flows. */
describe('a message JetStream rejects permanently', () => {
  const suffix = randomBytes(4).toString('hex');
  const stream = `SMALL_${suffix}`;
  const subject = `small.${suffix}`;
  let dir: string;
  let module: TestingModule;
  let nats: NatsConnection;

  beforeAll(async () => {
    nats = await connect({ servers: natsUrl() });
    const manager = await jetstreamManager(nats);
    await manager.streams.add({ name: stream, subjects: [`${subject}.>`], max_msg_size: 1_024 });
    dir = mkdtempSync(join(tmpdir(), 'outbox-jetstream-'));
    module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'better-sqlite3', database: join(dir, 'db.sqlite'), autoLoadEntities: true, migrations: [CreateOutboxTable], migrationsRun: true }),
        OutboxModule.forRoot({
          transport: new JetStreamTransport({ servers: natsUrl() }),
          pollIntervalMs: 100,
          maxAttempts: 3,
          backoff: { initialMs: 50, maxMs: 100, jitter: 0 },
        }),
      ],
    }).compile();
    module.useLogger(false);
    await module.init();
  });

  afterAll(async () => {
    await module?.close();
    await (await jetstreamManager(nats)).streams.delete(stream).catch(() => undefined);
    await nats?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('marks the oversized row dead after maxAttempts with the broker’s error, while other rows are published', async () => {
    const outbox = module.get(OutboxPublisher);
    await module.get(DataSource).transaction((manager) =>
      outbox.add(manager, [
        { type: 'blob.stored', aggregateType: 'blob', aggregateId: 'big', payload: { data: 'x'.repeat(4_000) }, topic: `${subject}.big` },
        { type: 'blob.stored', aggregateType: 'blob', aggregateId: 'small', payload: { data: 'ok' }, topic: `${subject}.small` },
      ]),
    );
    const rows = await waitFor('the oversized row to go dead', async () => {
      const current = await module.get(DataSource).query(`SELECT aggregate_id, status, attempts, last_error FROM outbox_messages ORDER BY position`);
      return current[0].status === 'dead' && current;
    });
    expect(rows[0]).toMatchObject({ aggregate_id: 'big', status: 'dead', attempts: 3 });
    expect(rows[0].last_error).toMatch(/maximum/i);
    expect(rows[1]).toMatchObject({ aggregate_id: 'small', status: 'published', attempts: 1 });
    const info = await (await jetstreamManager(nats)).streams.info(stream);
    expect(info.state.messages).toBe(1);
  });
});
