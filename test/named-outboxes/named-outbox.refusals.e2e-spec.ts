import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CreateOutboxTable, InjectOutbox, OutboxConfigurationError, OutboxModule, OutboxPublisher } from '@nest-outbox/outbox';
import { OutboxConsoleModule } from '@nest-outbox/outbox/console';
import { silentLogger } from '../support/silent-logger';
import { Crate } from './crate.fixtures';

const sqlite = (name?: string) =>
  TypeOrmModule.forRoot({ name, type: 'better-sqlite3', database: ':memory:', entities: [Crate], synchronize: true, migrations: [CreateOutboxTable], migrationsRun: true });

async function start(imports: Parameters<typeof Module>[0]['imports']): Promise<void> {
  @Module({ imports })
  class App {}
  const moduleRef = await Test.createTestingModule({ imports: [App] }).setLogger(silentLogger).compile();
  await moduleRef.close();
}

/** What an app that declares several outboxes gets wrong, refused when it starts, naming what to change. */
describe('several outboxes in one app: mistakes refused at startup', () => {
  it('refuses a name that cannot label a metric or a replication slot, naming the option', () => {
    expect(() => OutboxModule.forRoot({ name: 'Orders-EU', relay: false })).toThrow(OutboxConfigurationError);
    expect(() => OutboxModule.forRoot({ name: 'Orders-EU', relay: false })).toThrow('"name"');
  });

  it('refuses two outboxes of the same name', async () => {
    const started = start([sqlite('a'), sqlite('b'), OutboxModule.forRoot({ name: 'eu', dataSource: 'a', relay: false }), OutboxModule.forRoot({ name: 'eu', dataSource: 'b', relay: false })]);
    await expect(started).rejects.toThrow('OutboxModule is declared twice as the outbox "eu"');
  });

  it('refuses two outboxes on one TypeORM data source: each saved event would be written twice', async () => {
    const started = start([sqlite('a'), OutboxModule.forRoot({ name: 'eu', dataSource: 'a', relay: false }), OutboxModule.forRoot({ name: 'us', dataSource: 'a', relay: false })]);
    await expect(started).rejects.toThrow('the outbox "eu" and the outbox "us" both use the TypeORM data source "a"');
  });

  it('offers OutboxPublisher by class only from the outbox without a name: with named ones alone, injecting it fails', async () => {
    @Injectable()
    class Checkout {
      constructor(readonly outbox: OutboxPublisher) {}
    }
    @Injectable()
    class NamedCheckout {
      constructor(@InjectOutbox(OutboxPublisher, 'eu') readonly outbox: OutboxPublisher) {}
    }
    @Module({ imports: [sqlite('a'), OutboxModule.forRoot({ name: 'eu', dataSource: 'a', relay: false })], providers: [Checkout] })
    class ByClass {}
    await expect(Test.createTestingModule({ imports: [ByClass] }).setLogger(silentLogger).compile()).rejects.toThrow(/resolve dependencies of the Checkout/);
    @Module({ imports: [sqlite('a'), OutboxModule.forRoot({ name: 'eu', dataSource: 'a', relay: false })], providers: [NamedCheckout] })
    class ByName {}
    const moduleRef = await Test.createTestingModule({ imports: [ByName] }).setLogger(silentLogger).compile();
    try {
      expect(moduleRef.get(NamedCheckout).outbox).toBeInstanceOf(OutboxPublisher);
    } finally {
      await moduleRef.close();
    }
  });

  it('refuses a console for an outbox name that is not one', () => {
    expect(() => OutboxConsoleModule.forRoot({ noAuth: true, outbox: 'EU!' })).toThrow('"outbox"');
  });
});
