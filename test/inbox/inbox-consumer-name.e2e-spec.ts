import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { DataSourceOptions, Logger as TypeOrmLogger } from 'typeorm';
import { CreateInboxPoisonTable, CreateInboxTable, OutboxConfigurationError, OutboxInbox, OutboxInboxModule } from '@nest-outbox/outbox';
import { isolatedDatabase } from '../support/outbox-harness';

/** Every statement TypeORM sends, the inbox's included (it runs them through the data source). */
class StatementLog implements TypeOrmLogger {
  readonly statements: string[] = [];
  logQuery(query: string): void {
    this.statements.push(query);
  }
  logQueryError(): void {}
  logQuerySlow(): void {}
  logSchemaBuild(): void {}
  logMigration(): void {}
  log(): void {}
}

describe('inbox on PostgreSQL: a consumer name with a NUL', () => {
  let module: TestingModule;
  let drop: () => Promise<void>;
  const log = new StatementLog();

  beforeAll(async () => {
    const isolated = await isolatedDatabase('postgres');
    drop = isolated.drop;
    module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({
          ...(isolated.options as DataSourceOptions),
          migrations: [CreateInboxTable, CreateInboxPoisonTable],
          migrationsRun: true,
          logging: ['query'],
          logger: log,
        }),
        OutboxInboxModule.forRoot({ pruneIntervalMs: 0 }),
      ],
    }).compile();
    await module.init();
  });
  afterAll(async () => {
    await module?.close();
    await drop?.();
  });

  it('is refused with an error naming it, before any statement reaches the database', async () => {
    const inbox = module.get(OutboxInbox);
    let ran = false;
    log.statements.length = 0;
    const refused = inbox.process('00000000-0000-7000-8000-000000000001', 'billing\u0000projector', () => void (ran = true));
    await expect(refused).rejects.toBeInstanceOf(OutboxConfigurationError);
    await expect(refused).rejects.toThrow('Inbox consumer name "billing\\u0000projector" is refused: it contains the control character U+0000 at index 7.');
    expect({ ran, statements: log.statements }).toEqual({ ran: false, statements: [] });
    // The same message under a proper name runs: the refusal left nothing behind.
    await expect(inbox.process('00000000-0000-7000-8000-000000000001', 'billing.projector', () => 'ran')).resolves.toEqual({ duplicate: false, result: 'ran' });
    expect(log.statements.length).toBeGreaterThan(0);
  });
});
