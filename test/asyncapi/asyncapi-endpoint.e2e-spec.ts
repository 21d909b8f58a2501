import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { OutboxAsyncApi, type AsyncApiDocument } from '@nest-outbox/outbox/asyncapi';
import billingApp from './fixtures/billing-app';
import { validateAsyncApi } from './asyncapi-support';
import { waitFor } from '../support/wait-for';

// The typed app (class-validator decorators, a route, resolveTopic, an event with its own topic), running.
describe('the AsyncAPI document of a running app with typed events', () => {
  let dir: string;
  let app: INestApplication;
  let base: string;
  const marker = () => join(dir, 'marker');
  const auth = { authorization: `Basic ${Buffer.from('ops:billing-secret').toString('base64')}` };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'asyncapi-endpoint-'));
    process.env.BILLING_DATABASE = join(dir, 'billing.sqlite');
    process.env.BILLING_TRANSPORT_MARKER = marker();
    process.env.BILLING_SEED = '1';
    app = await NestFactory.create(billingApp(), { logger: false });
    await app.listen(0, '127.0.0.1');
    base = `${await app.getUrl()}/ops/outbox/api`;
  });
  afterAll(async () => {
    await app?.close();
    delete process.env.BILLING_DATABASE;
    delete process.env.BILLING_TRANSPORT_MARKER;
    delete process.env.BILLING_SEED;
    rmSync(dir, { recursive: true, force: true });
  });

  it('is served behind the console guard: 401 without credentials, the document with them', async () => {
    const refused = await fetch(`${base}/asyncapi.json`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Basic /);
    const served = await fetch(`${base}/asyncapi.json`, { headers: auth });
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await served.json()) as AsyncApiDocument).asyncapi).toBe('3.0.0');
  });

  it('is valid AsyncAPI 3.0 (no error from @asyncapi/parser) and says what the app publishes, where, in which shape', async () => {
    const text = await (await fetch(`${base}/asyncapi.json`, { headers: auth })).text();
    const { errors } = await validateAsyncApi(text);
    expect(errors).toEqual([]);
    const doc: AsyncApiDocument = JSON.parse(text);
    expect(doc.info).toMatchObject({ title: 'Billing', version: '2.1.0' });
    expect(doc.servers).toEqual({ production: { host: 'kafka.billing.internal:9092', protocol: 'kafka' } });
    // The aggregate's topic, the event's own topic, resolveTopic, and a route on another transport.
    const onChannel = (id: string) => Object.keys(doc.channels[id]?.messages ?? {}).sort();
    expect(Object.fromEntries(Object.entries(doc.channels).map(([id, channel]) => [id, channel.address]))).toEqual({
      billing: 'billing',
      'billing-audit': 'billing-audit',
      payments: 'payments',
      'ledger-ledger_entries': 'ledger.entries',
    });
    expect(onChannel('billing')).toEqual(['billing.invoice-issued.v2', 'billing.invoice-paid.v1']);
    expect(onChannel('billing-audit')).toEqual(['billing.invoice-voided.v1']);
    expect(onChannel('payments')).toEqual(['payments.payment-received.v1.cloudevents-structured']);
    expect(onChannel('ledger-ledger_entries')).toEqual(['billing.invoice-paid.v1.cloudevents-binary']);
    expect(doc.operations['send-billing']).toEqual({
      action: 'send',
      channel: { $ref: '#/channels/billing' },
      summary: 'Events sent to "billing".',
      messages: [{ $ref: '#/channels/billing/messages/billing.invoice-issued.v2' }, { $ref: '#/channels/billing/messages/billing.invoice-paid.v1' }],
    });

    // The body is the envelope; the event's class-validator decorators give its payload's schema.
    const issued = doc.components.messages['billing.invoice-issued.v2'];
    expect(issued).toMatchObject({ name: 'billing.invoice-issued', title: 'InvoiceIssued', contentType: 'application/json', headers: { $ref: '#/components/schemas/OutboxEnvelopeHeaders' } });
    const envelope = issued.payload as { required: string[]; properties: Record<string, any> };
    expect(envelope.required).toEqual(expect.arrayContaining(['id', 'type', 'version', 'aggregateId', 'payload']));
    expect(envelope.properties.type).toEqual({ type: 'string', const: 'billing.invoice-issued' });
    expect(envelope.properties.version).toEqual({ type: 'integer', const: 2 });
    const payload = envelope.properties.payload;
    expect(payload.required).toEqual(['invoiceId', 'amountCents', 'lines']);
    expect(payload.properties.invoiceId).toMatchObject({ type: 'string', format: 'uuid' });
    expect(payload.properties.amountCents).toMatchObject({ type: 'integer', minimum: 0 });
    expect(payload.properties.lines).toMatchObject({ type: 'array', items: { $ref: '#/components/schemas/InvoiceLine' } });
    expect(doc.components.schemas.InvoiceLine).toMatchObject({ properties: { sku: { type: 'string', minLength: 1 }, quantity: { type: 'integer', minimum: 1 } } });
    const paid = (doc.components.messages['billing.invoice-paid.v1'].payload as any).properties.payload;
    expect(paid.properties.currency).toMatchObject({ enum: ['EUR', 'USD'] });
    expect(paid.required).toEqual(['invoiceId', 'currency']);
    // Without decorators the payload is an object, and the document says why.
    const voided = (doc.components.messages['billing.invoice-voided.v1'].payload as any).properties.payload;
    expect(voided).toEqual({ type: 'object', description: expect.stringContaining('InvoiceVoided declares no class-validator decorator') });

    // Destinations of a CloudEvents format (the envelope option): the message as that destination receives it.
    const structured = doc.components.messages['payments.payment-received.v1.cloudevents-structured'];
    expect(structured.contentType).toBe('application/cloudevents+json');
    expect((structured.payload as any).properties).toMatchObject({ specversion: { const: '1.0' }, type: { const: 'payments.payment-received' }, source: { const: '/billing' }, eventversion: { const: 1 } });
    expect((structured.payload as any).properties.data.properties.paymentId).toMatchObject({ type: 'string', format: 'uuid' });
    const binary = doc.components.messages['billing.invoice-paid.v1.cloudevents-binary'];
    expect(binary.headers).toEqual({ $ref: '#/components/schemas/CloudEventsBinaryHeaders' });
    expect((binary.payload as any).properties.currency).toMatchObject({ enum: ['EUR', 'USD'] });
    expect((doc.components.schemas.CloudEventsBinaryHeaders as { required: string[] }).required).toEqual(expect.arrayContaining(['ce_id', 'ce_type', 'ce_source', 'ce_specversion', 'ce_eventversion']));

    const headers = doc.components.schemas.OutboxEnvelopeHeaders as { required: string[]; properties: Record<string, unknown> };
    expect(headers.required).toEqual(['outbox-message-id', 'outbox-event-type', 'outbox-event-version', 'outbox-aggregate-type', 'outbox-aggregate-id', 'outbox-occurred-at']);
    expect(Object.keys(headers.properties)).toEqual(expect.arrayContaining(['outbox-correlation-id', 'outbox-causation-id', 'outbox-tenant-id']));
  });

  it('is served as YAML too, which the parser reads as the same document', async () => {
    const response = await fetch(`${base}/asyncapi.yaml`, { headers: auth });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/yaml/);
    const yaml = await response.text();
    expect(yaml).toMatch(/^"asyncapi": "3\.0\.0"\n/);
    expect((await validateAsyncApi(yaml)).errors).toEqual([]);
    expect(require('js-yaml').load(yaml)).toEqual(app.get(OutboxAsyncApi).document());
  });

  it('(the relay of this running app publishes the seeded event: the CLI test relies on this marker)', async () => {
    await waitFor('the relay to publish the seeded event', () => existsSync(marker()) && readFileSync(marker(), 'utf8').includes('billing-broker published billing.invoice-voided'), 10_000);
  });
});
