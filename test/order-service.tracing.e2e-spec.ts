import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import request from 'supertest';
import { createOrderServiceApp, serveOrderService } from '../apps/order-service/src/bootstrap';
import { loadOrderServiceConfig } from '../apps/order-service/src/config/order-service.config';
import { startTracing, tracingConfig } from '../apps/order-service/src/tracing/tracing';
import { freePorts } from './support/free-port';
import { waitFor } from './support/wait-for';

/**
 * The demo started as main.ts starts it (its tracing first, then SQLite + TCP, its defaults): a
 * plain POST /orders, with no traceparent from the caller, is one trace from the HTTP request
 * through the outbox publish to the consumer's handling.
 */
describe('order-service tracing out of the box (SQLite + TCP)', () => {
  const exporter = new InMemorySpanExporter();
  let provider: NodeTracerProvider | undefined;
  let app: INestApplication | undefined;
  let dir: string;

  beforeAll(async () => {
    // The demo's own SDK setup, with no exporter configured (its default); the test only listens in memory.
    provider = startTracing({}, [new SimpleSpanProcessor(exporter)]);
    dir = mkdtempSync(join(tmpdir(), 'order-service-tracing-'));
    const [port, tcpPort] = await freePorts(2);
    const config = loadOrderServiceConfig({ DATABASE_URL: `sqlite:${join(dir, 'orders.sqlite')}`, PORT: String(port), TCP_PORT: String(tcpPort) });
    app = await createOrderServiceApp(config, false);
    await serveOrderService(app, config.httpPort);
  });

  afterAll(async () => {
    await app?.close();
    await provider?.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
    rmSync(dir, { recursive: true, force: true });
  });

  it('carries one trace id from POST /orders through publish to the consumer', async () => {
    const http = app!.getHttpServer();
    const { body: order } = await request(http).post('/orders').send({ customerId: 'c-1', items: [{ sku: 'PEN', quantity: 1, unitPriceCents: 99 }] }).expect(201);

    const spans = (kind: SpanKind, name: string) => exporter.getFinishedSpans().filter((span) => span.kind === kind && span.name === name);
    const trio = await waitFor('server, publish and consumer spans', () => {
      const [server] = spans(SpanKind.SERVER, 'POST /orders');
      const [publish] = spans(SpanKind.PRODUCER, 'publish orders');
      const [consumer] = spans(SpanKind.CONSUMER, 'process orders.order-placed');
      return server && publish && consumer && { server, publish, consumer };
    });
    const traceId = (span: ReadableSpan) => span.spanContext().traceId;
    expect(traceId(trio.publish)).toBe(traceId(trio.server));
    expect(traceId(trio.consumer)).toBe(traceId(trio.server));
    expect(trio.publish.parentSpanContext?.spanId).toBe(trio.server.spanContext().spanId);
    expect(trio.consumer.parentSpanContext?.spanId).toBe(trio.publish.spanContext().spanId);
    expect(trio.publish.attributes).toMatchObject({ 'messaging.message.id': expect.any(String), 'messaging.destination.name': 'orders' });

    // The trace went over the wire: the envelope the consumer received names the publish span.
    const { body: received } = await request(http).get('/received-events').query({ aggregateId: order.id }).expect(200);
    expect(received[0].envelope.headers.traceparent).toBe(`00-${traceId(trio.server)}-${trio.publish.spanContext().spanId}-01`);
  });

  it('exports nothing by default, prints to the console on request, and refuses an exporter it does not ship, naming the variable', () => {
    expect(tracingConfig({})).toEqual({ enabled: true, exporter: 'none' });
    expect(tracingConfig({ OTEL_TRACES_EXPORTER: 'console' })).toEqual({ enabled: true, exporter: 'console' });
    expect(tracingConfig({ OTEL_SDK_DISABLED: 'true' })).toMatchObject({ enabled: false });
    expect(() => tracingConfig({ OTEL_TRACES_EXPORTER: 'otlp' })).toThrow(/OTEL_TRACES_EXPORTER "otlp" is not built into the demo/);
    expect(() => tracingConfig({ OTEL_SDK_DISABLED: 'yes' })).toThrow(/OTEL_SDK_DISABLED "yes" must be true or false/);
  });
});
