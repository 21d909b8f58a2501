import { randomBytes } from 'node:crypto';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { OutboxModule, OutboxRelayHost, type OutboxModuleOptions, type OutboxTransport } from '@nest-outbox/outbox';
import type { OutgoingMessage } from '@nest-outbox/outbox/core';
import { Parcel } from './support/parcel.fixtures';
import { postgresAdmin as admin } from './support/databases';
import { requireService } from './support/services';
import { waitFor } from './support/wait-for';
import { postgresSchemaTypeOrm } from './support/capturing-app';

class CollectingTransport implements OutboxTransport {
  readonly name = 'collecting';
  readonly delivered: Array<{ message: OutgoingMessage; at: number }> = [];
  async publish(message: OutgoingMessage): Promise<void> {
    this.delivered.push({ message, at: Date.now() });
  }
}

/** Two instances on one database: a web instance that only writes, and a relay instance in another module. */
describe('cross-instance wake-up through PostgreSQL LISTEN/NOTIFY', () => {
  const schema = `notify_${randomBytes(5).toString('hex')}`;
  let url: string;
  const modules: TestingModule[] = [];

  async function instance(options: OutboxModuleOptions): Promise<TestingModule> {
    const module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ ...postgresSchemaTypeOrm(url, schema), autoLoadEntities: true }),
        OutboxModule.forRoot(options),
      ],
    }).compile();
    module.useLogger(false);
    await module.init();
    modules.push(module);
    return module;
  }

  beforeAll(async () => {
    url = requireService('postgres');
    await admin(url, `CREATE SCHEMA ${schema}`);
  });

  afterEach(async () => {
    for (const module of modules.splice(0).reverse()) await module.close();
  });

  afterAll(async () => {
    await admin(url, `DROP SCHEMA ${schema} CASCADE`);
  });

  it('publishes within milliseconds of a commit in another instance, although its poll is a minute away, also after losing its LISTEN connection', async () => {
    const writer = await instance({ relay: false, defaultTopic: 'parcels' });
    const transport = new CollectingTransport();
    await instance({ transport, pollIntervalMs: 60_000 });
    const save = async (label: string) => {
      const parcel = Parcel.register(label, 1);
      const committedAt = Date.now();
      await writer.get(DataSource).getRepository(Parcel).save(parcel);
      const { at } = await waitFor(`${label} at the relay instance`, () => transport.delivered.find((d) => d.message.key === parcel.id), 5_000);
      return at - committedAt;
    };

    expect(await save('first')).toBeLessThan(2_000);

    // Cut the relay's LISTEN connection, as a database restart would.
    const terminated = await admin(url, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN "outbox_outbox_messages"%'`);
    expect(terminated).toBe(1);
    await waitFor('the LISTEN connection to come back', async () => (await admin(url, `SELECT 1 FROM pg_stat_activity WHERE query LIKE 'LISTEN "outbox_outbox_messages"%'`)) === 1, 10_000);
    expect(await save('after-reconnect')).toBeLessThan(2_000);
  });

  it('stays on polling with notifications: false', async () => {
    const writer = await instance({ relay: false, defaultTopic: 'parcels', notifications: false });
    const transport = new CollectingTransport();
    const relay = await instance({ transport, pollIntervalMs: 60_000, notifications: false });
    // The relay's first round at startup must be over, or its claim may find the row below.
    await relay.get(OutboxRelayHost).drain();
    expect(await admin(url, `SELECT 1 FROM pg_stat_activity WHERE query LIKE 'LISTEN "outbox_outbox_messages"%'`)).toBe(0);
    const parcel = Parcel.register('quiet', 1);
    await writer.get(DataSource).getRepository(Parcel).save(parcel);
    // Absence is only observable over time: one second is far beyond a notification's delay.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(transport.delivered.some((d) => d.message.key === parcel.id)).toBe(false);
  });
});
