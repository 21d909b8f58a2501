import { OutboxConfigurationError } from '../../core/outbox.errors';
import { resolveConfluentKafkaOptions, type ConfluentKafkaTransportOptions } from './confluent-kafka.options';

const refusal = (options: unknown) => {
  try {
    resolveConfluentKafkaOptions(options as ConfluentKafkaTransportOptions);
  } catch (error) {
    expect(error).toBeInstanceOf(OutboxConfigurationError);
    return (error as Error).message;
  }
  throw new Error('the options were accepted');
};

describe('resolveConfluentKafkaOptions', () => {
  it('makes an idempotent, acks-all producer with 5 requests in flight, delivery reports and a short linger by default', () => {
    const settings = resolveConfluentKafkaOptions({ brokers: ['127.0.0.1:9092', ' kafka-2:9093'] });
    expect(settings).toEqual({
      name: 'kafka',
      connectTimeoutMs: 10_000,
      closeTimeoutMs: 5_000,
      librdkafka: {
        'socket.nagle.disable': true,
        'bootstrap.servers': '127.0.0.1:9092,kafka-2:9093',
        'client.id': 'nest-outbox',
        acks: -1,
        'enable.idempotence': true,
        'max.in.flight.requests.per.connection': 5,
        'linger.ms': 1,
        'message.timeout.ms': 8_000,
        dr_cb: true,
      },
    });
  });

  it('takes brokers as a comma-separated string, and passes other librdkafka properties through', () => {
    const { librdkafka } = resolveConfluentKafkaOptions({ brokers: 'a:1,b:2', config: { 'security.protocol': 'sasl_ssl', 'compression.codec': 'lz4', 'socket.nagle.disable': false } });
    expect(librdkafka).toMatchObject({ 'bootstrap.servers': 'a:1,b:2', 'security.protocol': 'sasl_ssl', 'compression.codec': 'lz4', 'socket.nagle.disable': false });
  });

  it('keeps order without the idempotent producer by allowing one request in flight, and refuses more', () => {
    expect(resolveConfluentKafkaOptions({ brokers: 'a:1', idempotent: false }).librdkafka).toMatchObject({ 'enable.idempotence': false, 'max.in.flight.requests.per.connection': 1 });
    expect(refusal({ brokers: 'a:1', idempotent: false, maxInFlight: 2 })).toBe(
      'Invalid ConfluentKafkaTransport option "maxInFlight": expected an integer from 1 to 1 without the idempotent producer (more would reorder a partition on a retry), got number 2.',
    );
    expect(refusal({ brokers: 'a:1', maxInFlight: 6 })).toContain('expected an integer from 1 to 5, got number 6');
  });

  it('refuses librdkafka properties that would change what "published" means, naming the option to use where there is one', () => {
    expect(refusal({ brokers: 'a:1', config: { acks: 1 } })).toContain('may not set "acks": the transport sets it itself');
    expect(refusal({ brokers: 'a:1', config: { dr_msg_cb: true } })).toContain('may not set "dr_msg_cb"');
    expect(refusal({ brokers: 'a:1', config: { 'transactional.id': 'x' } })).toContain('may not set "transactional.id"');
    expect(refusal({ brokers: 'a:1', config: { 'linger.ms': 0 } })).toBe('ConfluentKafkaTransport option "config" may not set "linger.ms": use the option "lingerMs" instead.');
    expect(refusal({ brokers: 'a:1', config: { 'message.timeout.ms': 1 } })).toContain('use the option "deliveryTimeoutMs" instead');
  });

  it('refuses missing or malformed brokers and out-of-range numbers, quoting the value', () => {
    expect(refusal({})).toContain('option "brokers": expected one or more "host:port" addresses, got undefined');
    expect(refusal({ brokers: ['localhost'] })).toContain('option "brokers"');
    expect(refusal({ brokers: [] })).toContain('option "brokers"');
    expect(refusal({ brokers: 'a:1', lingerMs: -1 })).toContain('option "lingerMs": expected an integer from 0');
    expect(refusal({ brokers: 'a:1', deliveryTimeoutMs: 1.5 })).toContain('option "deliveryTimeoutMs"');
    expect(refusal({ brokers: 'a:1', config: { 'client.rack': { zone: 1 } } })).toContain('option "config["client.rack"]": expected a string, number or boolean, got an object');
    expect(refusal({ brokers: 'a:1', config: [] })).toContain('option "config": expected an object');
  });
});
