import { ForbiddenException, UnauthorizedException, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  CreateOutboxTable,
  OutboxModule,
  OutboxPublisher,
  type OutboxMessageInput,
  type OutboxModuleOptions,
  type OutboxTransport,
} from '@nest-outbox/outbox';
import { OutboxRelay, RetryPolicy } from '@nest-outbox/outbox/core';
import { createSqlOutboxStore } from '@nest-outbox/outbox/typeorm';
import { OutboxConsoleModule, type OutboxConsoleOptions } from '@nest-outbox/outbox/console';
import { isolatedDatabase, type TestDatabase } from './outbox-harness';
import { dropWalInstanceSlot, walInstanceOptions, walOverflowWriter } from './wal-overflow.writer';

export const OPERATOR_TOKEN = 'operator-secret';

/** The kind of guard a user writes: no credential → 401, a wrong one → 403. */
export class BearerTokenGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const header = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>().headers.authorization;
    if (!header) throw new UnauthorizedException('Operator token required');
    if (header !== `Bearer ${OPERATOR_TOKEN}`) throw new ForbiddenException('Not an operator');
    return true;
  }
}

export interface ConsoleHarness {
  app: INestApplication;
  dataSource: DataSource;
  /** Writes messages in one transaction, as an application would. */
  add(messages: OutboxMessageInput[]): Promise<string[]>;
  /** A relay on this database, as another instance would run it; stopped by `close`. */
  relay(owner: string, transport: OutboxTransport, maxAttempts?: number): OutboxRelay;
  close(): Promise<void>;
}

const silent = { log: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * A Nest app (relay off) with the outbox and its console on a private database. With `delivery:
 * 'wal'` (PostgreSQL) the app is a write-only WAL-mode instance and `add` puts the messages in the
 * table as the stream's overflow does: the rows the console works on in that mode.
 */
export async function createConsoleHarness(
  database: TestDatabase,
  consoleOptions: OutboxConsoleOptions = { guard: BearerTokenGuard },
  onQuery?: (sql: string) => void,
  outboxOptions: Partial<OutboxModuleOptions> = {},
): Promise<ConsoleHarness> {
  const isolated = await isolatedDatabase(database);
  const schema = String((isolated.options as { schema?: string }).schema);
  const wal = outboxOptions.delivery === 'wal' ? walInstanceOptions(schema) : undefined;
  const module = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot({
        ...isolated.options,
        migrations: [CreateOutboxTable],
        migrationsRun: true,
        logging: onQuery ? ['query'] : false,
        logger: onQuery && { logQuery: onQuery, logQueryError: () => undefined, logQuerySlow: () => undefined, logSchemaBuild: () => undefined, logMigration: () => undefined, log: () => undefined },
      } as TypeOrmModuleOptions),
      OutboxModule.forRoot({ relay: false, defaultTopic: 'orders', ...wal, ...outboxOptions }),
      OutboxConsoleModule.forRoot(consoleOptions),
    ],
  }).compile();
  const app = module.createNestApplication({ logger: false });
  await app.init();
  const dataSource = app.get(DataSource);
  const publisher = app.get(OutboxPublisher);
  const relays: OutboxRelay[] = [];
  const moved = wal && walOverflowWriter(dataSource, 'outbox_messages', { defaultTopic: 'orders' });
  return {
    app,
    dataSource,
    add: (messages) => moved?.(messages) ?? dataSource.transaction((manager) => publisher.add(manager, messages)),
    relay: (owner, transport, maxAttempts = 5) => {
      const relay = new OutboxRelay({
        store: createSqlOutboxStore(dataSource, 'outbox_messages'),
        transports: new Map([['default', transport]]),
        owner,
        retryPolicy: new RetryPolicy(maxAttempts, { initialMs: 10, maxMs: 20, jitter: 0 }),
        batchSize: 100,
        leaseMs: 30_000,
        publishTimeoutMs: 5_000,
        logger: silent,
      });
      relays.push(relay);
      return relay;
    },
    close: async () => {
      await Promise.all(relays.map((relay) => relay.stop(5_000)));
      if (wal) await dropWalInstanceSlot(dataSource, schema);
      await app.close();
      await isolated.drop();
    },
  };
}
