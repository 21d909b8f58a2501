import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CreateInboxPoisonTable, CreateInboxTable, CreateOutboxTable, Idempotent, OutboxInboxModule, OutboxModule, OutboxPublisher, type OutboxEnvelope } from '@nest-outbox/outbox';
import { CLAIM_CHECK_HEADER } from '@nest-outbox/outbox/core';
import { RecordingTransport } from '../support/recording.transport';
import { PARCEL_ENTITIES } from '../support/parcel.fixtures';
import { waitFor } from '../support/wait-for';

@Injectable()
class ReportBuilder {
  readonly received: OutboxEnvelope[] = [];

  @Idempotent('claim-check-sqlite-reader')
  async handle(envelope: OutboxEnvelope): Promise<void> {
    this.received.push(envelope);
  }
}

/**
 * SQLite and TypeORM on one connection, producer and consumer in one app: the inbox reads the
 * payload from the outbox's payloads table while its own transaction holds that connection.
 */
describe('claim check on SQLite through TypeORM, the inbox in the same database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'claim-check-sqlite-'));
  const transport = new RecordingTransport();
  let module: TestingModule;

  beforeAll(async () => {
    module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({
          type: 'better-sqlite3',
          database: join(dir, 'db.sqlite'),
          entities: PARCEL_ENTITIES,
          synchronize: true,
          migrations: [CreateOutboxTable, CreateInboxTable, CreateInboxPoisonTable],
          migrationsRun: true,
        }),
        OutboxModule.forRoot({ transport, defaultTopic: 'documents', pollIntervalMs: 50, claimCheck: { thresholdBytes: 1_024 } }),
        OutboxInboxModule.forRoot({ pruneIntervalMs: 0, replayPollMs: 0 }),
      ],
      providers: [ReportBuilder],
    }).compile();
    module.useLogger(false);
    await module.init();
  });

  afterAll(async () => {
    await module?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('publishes the reference and hands the @Idempotent() handler the payload', async () => {
    const document = { lines: Array.from({ length: 200 }, (_, line) => `line ${line} of the report`) };
    const dataSource = module.get(DataSource);
    await dataSource.transaction((manager) => module.get(OutboxPublisher).add(manager, { type: 'documents.reported', aggregateType: 'document', aggregateId: 'r-1', payload: document }));
    await waitFor('the event published', () => transport.delivered.length === 1);
    const [delivered] = transport.delivered;
    expect(delivered.headers[CLAIM_CHECK_HEADER]).toBeDefined();
    expect(delivered.envelope.payload).toEqual({ outboxClaimCheck: JSON.parse(delivered.headers[CLAIM_CHECK_HEADER]) });

    const handler = module.get(ReportBuilder);
    await handler.handle(structuredClone(delivered.envelope));
    expect(handler.received.map((envelope) => envelope.payload)).toEqual([document]);
    // A redelivery is a duplicate: the handler does not run again.
    await handler.handle(structuredClone(delivered.envelope));
    expect(handler.received).toHaveLength(1);
  });
});
