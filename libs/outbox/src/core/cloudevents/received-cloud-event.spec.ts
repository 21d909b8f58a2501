import { cloudEventAttributes, CLOUD_EVENT_STRUCTURED_CONTENT_TYPE } from './cloud-event-attributes';
import { envelopeOfCloudEvent, headersOf } from './received-cloud-event';
import type { OutboxEnvelope } from '../outbox-message';

const envelope: OutboxEnvelope = {
  id: '018f2c1e-0000-7000-8000-000000000001',
  type: 'OrderPlaced',
  version: 2,
  aggregateType: 'Order',
  aggregateId: 'order-7',
  occurredAt: '2026-11-26T12:00:00.000Z',
  correlationId: 'corr-1',
  causationId: 'cause-1',
  tenantId: 'tenant-a',
  headers: { traceparent: '00-abc-def-01' },
  payload: { total: 42, id: 'not-the-message-id', type: 'not-the-event-type' },
};

describe('the CloudEvent of an outbox message', () => {
  it('maps id, type, source, subject, time, data and the extensions', () => {
    expect(cloudEventAttributes(envelope, '/shop/orders')).toEqual({
      specversion: '1.0',
      id: envelope.id,
      type: 'OrderPlaced',
      source: '/shop/orders',
      subject: 'order-7',
      time: '2026-11-26T12:00:00.000Z',
      datacontenttype: 'application/json',
      data: envelope.payload,
      eventversion: 2,
      aggregatetype: 'Order',
      correlationid: 'corr-1',
      causationid: 'cause-1',
      tenantid: 'tenant-a',
    });
  });

  it('leaves out the extensions an event has no value for', () => {
    const attributes = cloudEventAttributes({ ...envelope, correlationId: undefined, causationId: undefined, tenantId: undefined }, 'urn:shop');
    expect(Object.keys(attributes)).not.toEqual(expect.arrayContaining(['correlationid']));
    expect('tenantid' in attributes).toBe(false);
  });
});

describe('reading a received CloudEvent back as the envelope', () => {
  const attributes = cloudEventAttributes(envelope, '/shop/orders');

  it('reads a structured CloudEvent object (what Nest hands a handler)', () => {
    expect(envelopeOfCloudEvent(JSON.parse(JSON.stringify(attributes)))).toEqual({ ...envelope, headers: {} });
  });

  it('reads a structured CloudEvent as JSON text with its content type, keeping the other headers', () => {
    const read = envelopeOfCloudEvent(Buffer.from(JSON.stringify(attributes)), { 'Content-Type': CLOUD_EVENT_STRUCTURED_CONTENT_TYPE, traceparent: '00-abc-def-01' });
    expect(read).toEqual(envelope);
  });

  it('reads a binary Kafka message as kafkajs gives it (Buffer headers and value)', () => {
    const headers: Record<string, Buffer> = { 'content-type': Buffer.from('application/json'), traceparent: Buffer.from('00-abc-def-01') };
    for (const [name, value] of Object.entries(attributes)) if (name !== 'data' && name !== 'datacontenttype') headers[`ce_${name}`] = Buffer.from(String(value));
    const read = envelopeOfCloudEvent({ key: Buffer.from('order-7'), value: Buffer.from(JSON.stringify(envelope.payload)), headers });
    expect(read).toEqual(envelope);
  });

  it('reads a binary event whose body Nest already parsed, given the headers apart', () => {
    const read = envelopeOfCloudEvent(envelope.payload, { 'ce-id': 'm-1', 'ce-type': 'OrderPlaced', 'ce-specversion': '1.0', 'ce-source': '/x', 'ce-subject': 'order-7' });
    expect(read).toMatchObject({ id: 'm-1', type: 'OrderPlaced', version: 1, aggregateId: 'order-7', payload: envelope.payload, headers: {} });
  });

  it('reads the headers of a Nest context (KafkaContext-like)', () => {
    const context = { getArgs: () => [], getArgByIndex: () => undefined, getMessage: () => ({ headers: { ce_id: Buffer.from('m-2') } }) };
    expect(headersOf(context)).toEqual({ ce_id: 'm-2' });
  });

  it('is undefined for an outbox envelope, a bare id and a plain payload', () => {
    expect(envelopeOfCloudEvent(envelope)).toBeUndefined();
    expect(envelopeOfCloudEvent('m-1')).toBeUndefined();
    expect(envelopeOfCloudEvent({ total: 1 })).toBeUndefined();
    expect(envelopeOfCloudEvent('{"specversion":"1.0"}', { 'content-type': 'application/json' })).toBeUndefined();
  });
});
