import { Kafka } from 'cloudevents';
import { toOutgoingMessage } from '../../core/envelope';
import { resolveEnvelopeOptions, type EnvelopeOptions } from '../../core/cloudevents/envelope-options';
import { envelopeOfCloudEvent } from '../../core/cloudevents/received-cloud-event';
import { OutboxConfigurationError, OutboxNonRetryableError } from '../../core/outbox.errors';
import { bodyOf, type ClaimedMessage, type OutgoingMessage } from '../../core/outbox-message';
import type { OutboxTransport } from '../../core/outbox-transport.port';
import { withEnvelopeFormats } from './envelope-formats';

const row = (id: string, destination: string, aggregateId = 'order-7'): ClaimedMessage => ({
  id,
  type: 'OrderPlaced',
  version: 3,
  aggregateType: 'Order',
  aggregateId,
  transport: 'default',
  destination,
  occurredAt: '2026-11-26T12:00:00.000Z',
  correlationId: 'corr-1',
  tenantId: 'tenant-a',
  headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
  payloadJson: '{"total":42}',
  position: '1',
  attempt: 1,
});

class Recording implements OutboxTransport {
  readonly sent: OutgoingMessage[] = [];
  constructor(
    readonly name: string,
    readonly envelopeFormats?: OutboxTransport['envelopeFormats'],
  ) {}
  async publish(message: OutgoingMessage): Promise<void> {
    this.sent.push(message);
  }
}

class Batching extends Recording {
  readonly keepsKeyOrderInBatch = true;
  async publishBatch(messages: OutgoingMessage[]): Promise<Array<Error | undefined>> {
    this.sent.push(...messages);
    return messages.map(() => undefined);
  }
}

const kafkaLike = () => new Recording('kafka', ['outbox', 'cloudevents-binary', 'cloudevents-structured']);
const options: EnvelopeOptions = { source: '/shop/orders', destinations: { 'orders.binary': 'cloudevents-binary', 'orders.structured': 'cloudevents-structured' } };

function wrap(transport: OutboxTransport, envelope: EnvelopeOptions = options, routes: Array<{ transport: string; topic: string }> = []): OutboxTransport {
  return withEnvelopeFormats(new Map([['default', transport]]), resolveEnvelopeOptions(envelope), routes).get('default')!;
}

/** What a consumer using the SDK alone reads: a Kafka message of string headers and a string value. */
function asKafkaMessage(message: OutgoingMessage) {
  const value = JSON.stringify(bodyOf(message));
  return { key: message.key, headers: message.headers, value, body: value };
}

describe('destinations in a CloudEvents format', () => {
  it('binary mode: the SDK reads every attribute from ce_* headers and the payload from the body', () => {
    const kafka = kafkaLike();
    void wrap(kafka).publish(toOutgoingMessage(row('m-1', 'orders.binary')));
    const [sent] = kafka.sent;
    expect(sent.headers).toMatchObject({ ce_id: 'm-1', ce_type: 'OrderPlaced', ce_source: '/shop/orders', ce_specversion: '1.0', ce_eventversion: '3', 'content-type': 'application/json' });
    expect(Object.keys(sent.headers).filter((name) => name.startsWith('outbox-'))).toEqual([]);
    expect(bodyOf(sent)).toEqual({ total: 42 });
    const event = Kafka.toEvent(asKafkaMessage(sent)) as unknown as Record<string, unknown>;
    expect(event).toMatchObject({
      id: 'm-1',
      type: 'OrderPlaced',
      source: '/shop/orders',
      subject: 'order-7',
      time: '2026-11-26T12:00:00.000Z',
      data: { total: 42 },
      eventversion: '3',
      aggregatetype: 'Order',
      correlationid: 'corr-1',
      tenantid: 'tenant-a',
    });
    expect(sent.headers.traceparent).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
  });

  it('structured mode: the whole event is the body, with the CloudEvents content type', () => {
    const kafka = kafkaLike();
    void wrap(kafka).publish(toOutgoingMessage(row('m-2', 'orders.structured')));
    const [sent] = kafka.sent;
    expect(sent.headers['content-type']).toBe('application/cloudevents+json; charset=utf-8');
    expect(bodyOf(sent)).toMatchObject({ specversion: '1.0', id: 'm-2', type: 'OrderPlaced', subject: 'order-7', eventversion: 3, data: { total: 42 } });
    expect(Kafka.toEvent(asKafkaMessage(sent))).toMatchObject({ id: 'm-2', source: '/shop/orders', data: { total: 42 } });
  });

  it('both modes read back as the envelope the outbox published (what the inbox and typed consumers use)', () => {
    const kafka = kafkaLike();
    const transport = wrap(kafka);
    for (const destination of ['orders.binary', 'orders.structured']) void transport.publish(toOutgoingMessage(row(`m-${destination}`, destination)));
    const original = toOutgoingMessage(row('x', 'x')).envelope;
    for (const sent of kafka.sent) {
      const read = envelopeOfCloudEvent({ ...asKafkaMessage(sent), value: Buffer.from(asKafkaMessage(sent).value) });
      expect(read).toEqual({ ...original, id: sent.envelope.id });
    }
  });

  it('leaves outbox destinations untouched', () => {
    const kafka = kafkaLike();
    const outgoing = toOutgoingMessage(row('m-3', 'orders.legacy'));
    void wrap(kafka).publish(outgoing);
    expect(kafka.sent).toEqual([outgoing]);
  });

  it('changes nothing when no destination asks for CloudEvents (and needs no SDK)', () => {
    const transport = new Recording('tcp');
    const transports = new Map<string, OutboxTransport>([['default', transport]]);
    expect(withEnvelopeFormats(transports, resolveEnvelopeOptions(undefined), [])).toBe(transports);
  });

  it('refuses at startup binary mode on a transport that cannot carry it, naming the option and the transport', () => {
    const rabbit = new Recording('rabbitmq', ['outbox', 'cloudevents-structured']);
    expect(() => wrap(rabbit)).toThrow(OutboxConfigurationError);
    expect(() => wrap(rabbit)).toThrow(/"envelope.destinations\["orders.binary"\]" asks for 'cloudevents-binary' on the transport "rabbitmq".*Use 'cloudevents-structured' there/);
  });

  it('refuses at startup a custom transport that does not say it sends CloudEvents', () => {
    expect(() => wrap(new Recording('webhook'), { format: 'cloudevents-structured', source: 'urn:shop' })).toThrow(
      /"envelope.format" asks for 'cloudevents-structured' on the transport "webhook", which can only send 'outbox'.*"envelopeFormats"/,
    );
  });

  it('checks a route\'s topic against the route\'s transport, not the default one', () => {
    const tcp = new Recording('tcp');
    const partner = new Recording('rabbitmq', ['outbox', 'cloudevents-structured']);
    const transports = new Map<string, OutboxTransport>([
      ['default', tcp],
      ['partner', partner],
    ]);
    const envelope = resolveEnvelopeOptions({ source: '/shop', destinations: { 'partner.orders': 'cloudevents-structured' } });
    const wrapped = withEnvelopeFormats(transports, envelope, [{ transport: 'partner', topic: 'partner.orders' }]);
    void wrapped.get('partner')!.publish(toOutgoingMessage(row('m-4', 'partner.orders')));
    expect(partner.sent[0].headers['content-type']).toBe('application/cloudevents+json; charset=utf-8');
    expect(() => withEnvelopeFormats(transports, envelope, [])).toThrow(/on the transport "tcp"/);
  });

  it('fails a message alone and for good when its format reaches a transport that cannot send it', async () => {
    const tcp = new Recording('tcp', ['outbox']);
    const wrapped = withEnvelopeFormats(new Map([['default', kafkaLike()], ['other', tcp]]), resolveEnvelopeOptions(options), []).get('other')!;
    await expect(wrapped.publish(toOutgoingMessage(row('m-5', 'orders.binary')))).rejects.toThrow(OutboxNonRetryableError);
    expect(tcp.sent).toEqual([]);
  });

  it('in a batch, holds back the later messages of an aggregate behind one that failed, and sends the others', async () => {
    const batching = new Batching('kafka', ['outbox', 'cloudevents-binary', 'cloudevents-structured']);
    const wrapped = wrap(batching);
    const bad = { ...toOutgoingMessage(row('m-6', 'orders.binary')), envelope: { ...toOutgoingMessage(row('m-6', 'orders.binary')).envelope, type: '' } };
    const outcomes = await wrapped.publishBatch!([bad, toOutgoingMessage(row('m-7', 'orders.binary')), toOutgoingMessage(row('m-8', 'orders.binary', 'order-8'))]);
    expect(outcomes[0]).toBeInstanceOf(OutboxNonRetryableError);
    expect(outcomes[0]?.message).toMatch(/CloudEvent refused by the cloudevents SDK/);
    expect(outcomes[1]?.message).toMatch(/an earlier message of aggregate "order-7"/);
    expect(outcomes[2]).toBeUndefined();
    expect(batching.sent.map((message) => message.envelope.id)).toEqual(['m-8']);
  });

  it('names the package and the install command when the SDK is missing', () => {
    jest.isolateModules(() => {
      jest.doMock('cloudevents', () => {
        throw Object.assign(new Error("Cannot find module 'cloudevents'"), { code: 'MODULE_NOT_FOUND' });
      });
      const { withEnvelopeFormats: isolated } = require('./envelope-formats') as typeof import('./envelope-formats');
      expect(() => isolated(new Map([['default', kafkaLike()]]), resolveEnvelopeOptions(options), [])).toThrow(
        /"envelope.destinations\["orders.binary"\]", "envelope.destinations\["orders.structured"\]" asks for CloudEvents, made by the package "cloudevents", which is not installed. Run "npm install cloudevents"/,
      );
    });
  });
});
