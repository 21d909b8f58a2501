import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Body, Controller, Module, Post, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientsModule, Ctx, EventPattern, Payload, Transport, type RmqContext } from '@nestjs/microservices';
import { TypeOrmModule } from '@nestjs/typeorm';
import { trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { CreateOutboxTable, OutboxModule, OutboxPublisher, type OutboxEnvelope } from '@nest-outbox/outbox';
import { continueOutboxTrace } from '@nest-outbox/outbox/observability';
import { traceContextMiddleware } from '../apps/order-service/src/operations/trace-context.middleware';
import { InMemoryTracing } from './support/in-memory-tracing';
import { startOrderService, type RunningOrderService } from './support/order-service.harness';
import { requireService } from './support/services';
import { stringHeaders } from './transports/transport-contract';
import { waitFor } from './support/wait-for';

/** The trace of an HTTP request, through the outbox table and a real broker, to the consumer's span. */
describe('tracing from the HTTP request to the consumer', () => {
  let tracing: InMemoryTracing;

  beforeAll(() => {
    tracing = new InMemoryTracing();
  });

  afterAll(async () => {
    await tracing.shutdown();
  });

  /**
   * Spans reach the exporter when they end, and the consumer's may end before the publish span:
   * the broker can deliver the message before the publisher has its acknowledgement.
   */
  async function waitForTrace(traceId: string, consumerName: string): Promise<void> {
    const ended = (predicate: (span: ReadableSpan) => boolean) => tracing.spans().some((span) => span.spanContext().traceId === traceId && predicate(span));
    await waitFor(
      'the consumer, publish and HTTP server spans in the caller’s trace',
      () => ended((span) => span.name === consumerName) && ended((span) => span.name.startsWith('publish ')) && ended((span) => span.name.startsWith('POST ')),
      30_000,
    );
  }

  /** client → SERVER (HTTP) → PRODUCER (publish, linked to the writer) → CONSUMER, all in one trace. */
  function expectOneTrace(root: string, consumerName: string) {
    const spans = tracing.spans().filter((span) => span.spanContext().traceId === root);
    const consumer = spans.find((span) => span.name === consumerName)!;
    const publish = spans.find((span) => span.name.startsWith('publish '))!;
    const server = spans.find((span) => span.name.startsWith('POST '))!;
    expect([consumer, publish, server].every(Boolean)).toBe(true);
    expect(consumer.parentSpanContext?.spanId).toBe(publish.spanContext().spanId);
    expect(publish.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    expect(publish.links.map((link) => link.context.spanId)).toEqual([server.spanContext().spanId]);
    expect(publish.kind).toBe(3); // PRODUCER
    expect(consumer.kind).toBe(4); // CONSUMER
    return { consumer, publish, server };
  }

  describe('through Kafka (the demo on PostgreSQL)', () => {
    let service: RunningOrderService;

    beforeEach(async () => {
      service = await startOrderService('postgres', 'kafka');
    });

    afterEach(async () => {
      await service?.close();
    });

    it('continues the caller’s trace in the @EventPattern handler, with traceparent on the Kafka record', async () => {
      const { span: client, headers } = tracing.clientSpan('client POST /orders');
      const traceId = client.spanContext().traceId;
      const http = service.app.getHttpServer();
      const created = await request(http)
        .post('/orders')
        .set(headers)
        .send({ customerId: 'c-9', items: [{ sku: 'PEN-1', quantity: 3, unitPriceCents: 150 }] })
        .expect(201);

      await waitForTrace(traceId, 'process orders.order-placed');
      const { publish, server } = expectOneTrace(traceId, 'process orders.order-placed');
      expect(server.parentSpanContext?.spanId).toBe(client.spanContext().spanId);
      expect(publish.attributes).toMatchObject({ 'messaging.system': 'kafka', 'messaging.destination.name': service.config.ordersTopic, 'messaging.operation.type': 'send' });

      const [received] = (await request(http).get('/received-events').query({ aggregateId: created.body.id })).body;
      expect(received.headers.traceparent).toBe(`00-${traceId}-${publish.spanContext().spanId}-01`);
    });
  });

  describe('through RabbitMQ (SQLite)', () => {
    let app: INestApplication;
    let dir: string;
    const seen: Array<{ envelope: OutboxEnvelope; headers: Record<string, string>; activeTraceId?: string }> = [];

    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), 'outbox-tracing-'));
      const queue = `outbox-tracing-${randomBytes(5).toString('hex')}`;
      const rmq = { urls: [requireService('rabbitmq')], queue, queueOptions: { durable: true, arguments: { 'x-expires': 300_000 } } };

      @Controller()
      class NotesController {
        constructor(
          private readonly dataSource: DataSource,
          private readonly outbox: OutboxPublisher,
        ) {}

        @Post('notes')
        async add(@Body() body: { text: string }): Promise<{ ok: true }> {
          await this.dataSource.transaction((manager) =>
            this.outbox.add(manager, { type: 'notes.note-added', aggregateType: 'note', aggregateId: 'N-1', payload: body, topic: 'notes' }),
          );
          return { ok: true };
        }

        @EventPattern('notes')
        handle(@Payload() envelope: OutboxEnvelope, @Ctx() context: unknown): void {
          continueOutboxTrace(envelope, () => {
            const { properties } = (context as RmqContext).getMessage() as { properties: { headers?: Record<string, unknown> } };
            seen.push({ envelope, headers: stringHeaders(properties.headers), activeTraceId: trace.getActiveSpan()?.spanContext().traceId });
          });
        }
      }

      @Module({
        imports: [
          TypeOrmModule.forRoot({ type: 'better-sqlite3', database: join(dir, 'db.sqlite'), migrations: [CreateOutboxTable], migrationsRun: true }),
          ClientsModule.register([{ name: 'NOTES', transport: Transport.RMQ, options: rmq }]),
          OutboxModule.forRoot({ transport: 'NOTES', tracing: true, pollIntervalMs: 200 }),
        ],
        controllers: [NotesController],
      })
      class NotesModule {}

      app = await NestFactory.create(NotesModule, { logger: false });
      app.use(traceContextMiddleware);
      app.connectMicroservice({ transport: Transport.RMQ, options: rmq });
      await app.startAllMicroservices();
      await app.init();
    });

    afterEach(async () => {
      await app?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('continues the caller’s trace in the @EventPattern handler, with traceparent in the AMQP headers', async () => {
      const { span: client, headers } = tracing.clientSpan('client POST /notes');
      const traceId = client.spanContext().traceId;
      await request(app.getHttpServer()).post('/notes').set(headers).send({ text: 'hello' }).expect(201);

      await waitForTrace(traceId, 'process notes.note-added');
      const { publish } = expectOneTrace(traceId, 'process notes.note-added');
      expect(publish.attributes).toMatchObject({ 'messaging.system': 'rabbitmq', 'messaging.destination.name': 'notes' });
      const [delivery] = seen;
      expect(delivery.activeTraceId).toBe(traceId);
      expect(delivery.headers.traceparent).toBe(`00-${traceId}-${publish.spanContext().spanId}-01`);
      expect(delivery.envelope.headers.traceparent).toBe(delivery.headers.traceparent);
    });
  });
});
