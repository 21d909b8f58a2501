import { randomBytes, randomUUID } from 'node:crypto';
import { Controller, type INestMicroservice } from '@nestjs/common';
import { ClientProxyFactory, EventPattern, Payload, Transport, type ClientOptions, type ClientProxy, type MicroserviceOptions } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { lastValueFrom } from 'rxjs';
import { DataSource } from 'typeorm';
import { CreateInboxPoisonTable, CreateInboxTable, Idempotent, OutboxInbox, OutboxInboxModule, type OutboxEnvelope } from '@nest-outbox/outbox';
import { freePort } from '../support/free-port';
import { isolatedDatabase } from '../support/outbox-harness';
import { requireService } from '../support/services';
import { waitFor } from '../support/wait-for';

/** Server and client options of one transport, for a private queue/subject/port. */
const transports: Array<[string, (suffix: string) => Promise<{ topic: string; options: ClientOptions }>]> = [
  ['tcp', async (suffix) => ({ topic: `inbox-${suffix}`, options: { transport: Transport.TCP, options: { host: '127.0.0.1', port: await freePort() } } })],
  [
    'rabbitmq',
    async (suffix) => ({
      topic: `inbox.${suffix}`,
      options: { transport: Transport.RMQ, options: { urls: [requireService('rabbitmq')], queue: `outbox-inbox-${suffix}`, queueOptions: { durable: false, autoDelete: true } } },
    }),
  ],
  ['nats', async (suffix) => ({ topic: `outbox-inbox.${suffix}`, options: { transport: Transport.NATS, options: { servers: requireService('nats') } } })],
];

describe.each(transports)('inbox behind a Nest %s consumer', (_name, transport) => {
  let app: INestMicroservice | undefined;
  let client: ClientProxy | undefined;
  let isolated: Awaited<ReturnType<typeof isolatedDatabase>>;
  const calls: string[] = [];
  const settled: string[] = [];

  afterAll(async () => {
    await client?.close();
    await app?.close();
    await isolated?.drop();
  });

  it('applies a message delivered three times, twice at once, exactly once', async () => {
    const { topic, options } = await transport(randomBytes(5).toString('hex'));

    @Controller()
    class Projector {
      constructor(private readonly inbox: OutboxInbox) {}

      @EventPattern<Record<string, OutboxEnvelope>>(topic)
      async receive(@Payload() envelope: OutboxEnvelope): Promise<void> {
        await this.project(envelope);
        settled.push(envelope.id);
      }

      @Idempotent('inbox-brokers.projector')
      async project(envelope: OutboxEnvelope): Promise<void> {
        calls.push(envelope.id);
        await this.inbox.manager().query('INSERT INTO inbox_projection (message_id) VALUES ($1)', [envelope.id]);
      }
    }

    isolated = await isolatedDatabase('postgres');
    const module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ ...isolated.options, migrations: [CreateInboxTable, CreateInboxPoisonTable], migrationsRun: true, logging: false } as TypeOrmModuleOptions),
        OutboxInboxModule.forRoot({ pruneIntervalMs: 0 }),
      ],
      controllers: [Projector],
    }).compile();
    app = module.createNestMicroservice<MicroserviceOptions>(options as MicroserviceOptions);
    app.useLogger(false);
    await app.listen();
    const dataSource = app.get(DataSource);
    // The side effect has no unique key: only the inbox keeps it to one row per message.
    await dataSource.query('CREATE TABLE inbox_projection (n serial PRIMARY KEY, message_id uuid NOT NULL)');

    client = ClientProxyFactory.create(options);
    await client.connect();
    const envelope: OutboxEnvelope = {
      id: randomUUID(), type: 'orders.order-placed', version: 1, aggregateType: 'order', aggregateId: randomUUID(),
      occurredAt: new Date().toISOString(), headers: {}, payload: { totalCents: 100 },
    };
    const emit = () => lastValueFrom(client!.emit(topic, envelope), { defaultValue: undefined });
    await Promise.all([emit(), emit()]);
    await emit();

    await waitFor('three deliveries handled', () => settled.filter((id) => id === envelope.id).length === 3);
    const marks = Number((await dataSource.query(`SELECT COUNT(*) AS n FROM "outbox_inbox" WHERE message_id = $1`, [envelope.id]))[0].n);
    expect(marks).toBe(1);
    const projected = async () => Number((await dataSource.query('SELECT COUNT(*) AS n FROM inbox_projection WHERE message_id = $1', [envelope.id]))[0].n);
    expect(await projected()).toBe(1);
    // Delivered three times (two at once); the handler's body ran once.
    expect(calls.filter((id) => id === envelope.id)).toHaveLength(1);
  });
});
