import { mkdtempSync, rmSync } from 'node:fs';
import { silentLogger } from './support/silent-logger';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  CreateOutboxTable,
  OutboxConfigurationError,
  OutboxModule,
  OutboxPublisher,
  OutboxRelayHost,
  type OutboxModuleOptions,
  type OutboxTransport,
} from '@nest-outbox/outbox';
import type { OutgoingMessage } from '@nest-outbox/outbox/core';
import { createOutboxTableMigration, outboxMessageEntity } from '@nest-outbox/outbox/typeorm';
import { Parcel, PARCEL_ENTITIES } from './support/parcel.fixtures';
import { startupFailure } from './support/startup-failure';
import { waitFor } from './support/wait-for';

class ArrayTransport implements OutboxTransport {
  readonly name = 'array';
  readonly delivered: OutgoingMessage[] = [];
  release: (() => void) | undefined;
  gate: Promise<void> | undefined;

  async publish(message: OutgoingMessage): Promise<void> {
    await this.gate;
    this.delivered.push(message);
  }
}

describe('OutboxModule at startup and shutdown (SQLite)', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'outbox-startup-'));
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const database = (migrations = true) =>
    TypeOrmModule.forRoot({
      type: 'better-sqlite3',
      database: join(dir, 'db.sqlite'),
      entities: PARCEL_ENTITIES,
      autoLoadEntities: true,
      synchronize: true,
      migrations: migrations ? [CreateOutboxTable] : [],
      migrationsRun: migrations,
      retryAttempts: 0,
    });

  async function start(outbox: ReturnType<typeof OutboxModule.forRoot>, migrations = true) {
    const module = await Test.createTestingModule({ imports: [database(migrations), outbox] }).setLogger(silentLogger).compile();
    module.useLogger(false);
    try {
      await module.init();
    } catch (error) {
      await module.close();
      throw error;
    }
    return module;
  }

  it.each<[string, OutboxModuleOptions, RegExp]>([
    ['a negative poll interval', { transport: new ArrayTransport(), pollIntervalMs: -1 }, /"pollIntervalMs": expected an integer from 1 to 3600000, got -1/],
    ['a health threshold below the poll interval', { transport: new ArrayTransport(), pollIntervalMs: 70_000, health: { maxRoundAgeMs: 60_000 } }, /"health.maxRoundAgeMs"/],
    ['a value that is no transport', { transport: 42 as unknown as OutboxTransport }, /"transport" is 42, which is neither a ClientsModule token/],
    ['an object that is no transport', { transports: { audit: { publish: 'soon' } as unknown as OutboxTransport } }, /"transports.audit" is an object \(Object\)/],
    [
      'a route to a transport that is not configured',
      { transport: new ArrayTransport(), routes: [{ events: ['parcels.parcel-registered'], transport: 'audit', topic: 'audit' }] },
      /"routes\[0\].transport" names the transport "audit", which is not configured/,
    ],
  ])('fails where forRoot is declared, before any module connects, on %s', (_, options, message) => {
    const declare = () => OutboxModule.forRoot(options);
    expect(declare).toThrow(OutboxConfigurationError);
    expect(declare).toThrow(message);
  });

  it('fails at startup on the same mistakes returned by a forRootAsync factory', async () => {
    const declared = OutboxModule.forRootAsync({ useFactory: () => ({ transport: new ArrayTransport(), routes: [{ transport: 'audit', topic: 'audit' }] }) });
    await expect(start(declared)).rejects.toThrow(/"routes\[0\].transport" names the transport "audit", which is not configured/);
    const negative = OutboxModule.forRootAsync({ useFactory: () => ({ transport: new ArrayTransport(), pollIntervalMs: -1 }) });
    await expect(start(negative)).rejects.toThrow(/"pollIntervalMs": expected an integer from 1 to 3600000, got -1/);
  });

  it.each<[string, OutboxModuleOptions, RegExp]>([
    ['a transport token nobody provides', { transport: 'KAFKA_CLIENT' }, /"transport" names the provider "KAFKA_CLIENT", but no module provides it/],
    ['no transport while relaying', {}, /"transport" \(or "transports"\) is required when "relay" is enabled/],
    ['a provider that is no transport', { transport: DataSource }, /neither a ClientProxy nor an OutboxTransport/],
  ])('fails with %s, naming the option', async (_, options, message) => {
    const failure = await start(OutboxModule.forRoot(options)).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(OutboxConfigurationError);
    expect((failure as Error).message).toMatch(message);
  });

  it('fails on a table name that is not an identifier, before anything connects', () => {
    expect(() => OutboxModule.forRoot({ relay: false, tableName: 'outbox; drop table x' })).toThrow(/"tableName"/);
  });

  it.each([
    ['forRoot', () => OutboxModule.forRoot({ relay: false, schema: 'billing; drop table x' })],
    ['forRootAsync', () => OutboxModule.forRootAsync({ schema: 'public.outbox', useFactory: () => ({ relay: false }) })],
  ])('fails on a schema name that is not an identifier (%s), before anything connects', (_, declare) => {
    expect(declare).toThrow(OutboxConfigurationError);
    expect(declare).toThrow(/Invalid OutboxModule option "schema": expected an identifier \(letters, digits and _, not starting with a digit, at most 63 characters\)/);
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['isGlobal', { relay: false, isGlobal: 'yes' }, /"isGlobal": expected true or false, got "yes"/],
    ['dataSource', { relay: false, dataSource: 42 }, /"dataSource": expected the name of a TypeORM data source/],
    ['dataSource', { relay: false, dataSource: '' }, /"dataSource": expected the name of a TypeORM data source/],
    ['transports', { relay: false, transports: 'PARTNER_RMQ' }, /"transports": expected an object of named transports/],
  ])('fails on a bad %s where it is declared, naming it', (_, options, message) => {
    const declare = () => OutboxModule.forRoot(options as OutboxModuleOptions);
    expect(declare).toThrow(OutboxConfigurationError);
    expect(declare).toThrow(message);
  });

  it('fails at startup on a schema, which SQLite does not have, naming the option', async () => {
    const failure = await startupFailure(
      { type: 'better-sqlite3', database: join(dir, 'db.sqlite'), migrations: [CreateOutboxTable], migrationsRun: true, retryAttempts: 0 },
      [OutboxModule.forRoot({ relay: false, schema: 'billing' })],
    );
    expect(failure).toBeInstanceOf(OutboxConfigurationError);
    expect((failure as Error).message).toMatch(/option "schema" \("billing"\): a schema is supported on PostgreSQL only, not on the TypeORM driver "better-sqlite3"/);
  });

  it('fails at startup on a schema returned by the forRootAsync factory, where it would be ignored', async () => {
    const declared = OutboxModule.forRootAsync({ useFactory: () => ({ relay: false, schema: 'billing' }) as OutboxModuleOptions });
    await expect(start(declared)).rejects.toThrow(/"schema" was returned by the forRootAsync factory, where it comes too late.*next to useFactory/);
  });

  it('says which migration to add when the outbox table is missing', async () => {
    await expect(start(OutboxModule.forRoot({ relay: false }), false)).rejects.toThrow(/Add CreateOutboxTable .* to the data source's migrations/);
  });

  it('takes options from forRootAsync with useClass', async () => {
    const transport = new ArrayTransport();
    @Injectable()
    class OutboxConfig {
      createOutboxOptions(): OutboxModuleOptions {
        return { transport, defaultTopic: 'async-topic', pollIntervalMs: 60_000 };
      }
    }
    @Module({ providers: [OutboxConfig], exports: [OutboxConfig] })
    class ConfigModule {}

    const module = await start(OutboxModule.forRootAsync({ imports: [ConfigModule], useClass: OutboxConfig }));
    try {
      const parcel = Parcel.register('async', 1);
      await module.get(DataSource).getRepository(Parcel).save(parcel);
      // Woken by the commit, not by the (one minute) poll.
      await waitFor('the after-commit wake-up to publish', () => transport.delivered.length === 1);
      expect(transport.delivered[0]).toMatchObject({ key: parcel.id, destination: 'parcels' });
      expect(module.get(OutboxPublisher)).toBeInstanceOf(OutboxPublisher);
    } finally {
      await module.close();
    }
  });

  it('on shutdown finishes the batch in flight, stops claiming and leaves no lease behind', async () => {
    const transport = new ArrayTransport();
    let open!: () => void;
    transport.gate = new Promise<void>((resolve) => (open = resolve));
    const module = await start(OutboxModule.forRoot({ transport, pollIntervalMs: 60_000, shutdownTimeoutMs: 5_000 }));
    const dataSource = module.get(DataSource);
    await dataSource.getRepository(Parcel).save([Parcel.register('a', 1), Parcel.register('b', 2)]);
    await waitFor('the batch to be claimed', async () => {
      const [{ leased }] = await dataSource.query(`SELECT count(*) AS leased FROM outbox_messages WHERE lease_owner IS NOT NULL`);
      return leased === 2;
    });

    const closing = module.close();
    setTimeout(open, 100);
    await closing;

    expect(transport.delivered).toHaveLength(2);
    const rows = await new DataSource({ type: 'better-sqlite3', database: join(dir, 'db.sqlite') })
      .initialize()
      .then(async (ds) => {
        const result = await ds.query(`SELECT status, lease_owner FROM outbox_messages`);
        await ds.destroy();
        return result;
      });
    expect(rows).toEqual([
      { status: 'published', lease_owner: null },
      { status: 'published', lease_owner: null },
    ]);
  });

  it('works on a named data source with a table name of its own', async () => {
    const transport = new ArrayTransport();
    const module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({
          name: 'events',
          type: 'better-sqlite3',
          database: join(dir, 'events.sqlite'),
          entities: PARCEL_ENTITIES,
          autoLoadEntities: true,
          synchronize: true,
          migrations: [createOutboxTableMigration('parcel_outbox')],
          migrationsRun: true,
          retryAttempts: 0,
        }),
        OutboxModule.forRoot({ transport, dataSource: 'events', tableName: 'parcel_outbox', pollIntervalMs: 60_000 }),
      ],
    }).compile();
    module.useLogger(false);
    await module.init();
    try {
      const dataSource = module.get<DataSource>(getDataSourceToken('events'));
      await dataSource.getRepository(Parcel).save(Parcel.register('named', 3));
      await waitFor('the event from the named data source', () => transport.delivered.length === 1);
      const rows = await waitFor('the row to be settled', async () => {
        const current = await dataSource.getRepository(outboxMessageEntity('parcel_outbox')).find();
        return current[0]?.status === 'published' && current;
      });
      expect(rows).toEqual([expect.objectContaining({ eventType: 'parcels.parcel-registered', status: 'published' })]);
    } finally {
      await module.close();
    }
  });

  it('exposes the relay host for tools and tests', async () => {
    const module = await start(OutboxModule.forRoot({ relay: false }));
    try {
      expect(await module.get(OutboxRelayHost).publishBatch()).toEqual({ claimed: 0, published: 0, retried: 0, dead: 0 });
    } finally {
      await module.close();
    }
  });
});
