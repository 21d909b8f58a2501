import { ConfluentKafkaTransport } from './confluent-kafka.transport';

// The binding stands in for librdkafka here: what is checked is the order of the calls the
// transport makes while connecting. test/transports/confluent-kafka.contract.e2e-spec.ts runs the
// real producer against the Kafka test broker.
const producers: FakeProducer[] = [];

class FakeProducer {
  readonly calls: string[] = [];
  metadataOptions: unknown;
  answerMetadata!: (error: Error | null) => void;

  constructor() {
    producers.push(this);
  }

  on(): void {}

  connect(_options: unknown, callback: (error: Error | null) => void): void {
    this.calls.push('connect');
    callback(null);
  }

  setPollInBackground(): void {
    this.calls.push('poll in background');
  }

  getMetadata(options: unknown, callback: (error: Error | null) => void): void {
    this.calls.push('metadata');
    this.metadataOptions = options;
    this.answerMetadata = callback;
  }

  disconnect(_timeoutMs: number, callback: () => void): void {
    this.calls.push('disconnect');
    callback();
  }
}

jest.mock('@confluentinc/kafka-javascript', () => ({ Producer: FakeProducer }));

describe('ConfluentKafkaTransport connecting', () => {
  beforeEach(() => (producers.length = 0));

  it('is connected only once a brokers-only metadata request is answered, so that the producer id is asked for at once', async () => {
    const transport = new ConfluentKafkaTransport({ brokers: ['127.0.0.1:9092'], connectTimeoutMs: 4_000 });
    let connected = false;
    const connecting = transport.connect().then(() => (connected = true));
    await new Promise((resolve) => setImmediate(resolve));

    const [producer] = producers;
    expect(producer.calls).toEqual(['connect', 'poll in background', 'metadata']);
    expect(producer.metadataOptions).toEqual({ allTopics: false, timeout: 4_000 });
    expect(connected).toBe(false);

    producer.answerMetadata(null);
    await connecting;
    expect(connected).toBe(true);
  });

  it('fails to connect, naming the transport, and lets the producer go when no broker answers the request', async () => {
    const transport = new ConfluentKafkaTransport({ brokers: ['127.0.0.1:9092'], name: 'orders-kafka' });
    const connecting = transport.connect();
    await new Promise((resolve) => setImmediate(resolve));

    producers[0].answerMetadata(new Error('Local: Broker transport failure'));
    await expect(connecting).rejects.toThrow('orders-kafka: could not connect to the brokers: Local: Broker transport failure');
    expect(producers[0].calls.at(-1)).toBe('disconnect');

    // Not kept: the next publish opens another producer.
    void transport.connect().catch(() => undefined);
    await new Promise((resolve) => setImmediate(resolve));
    expect(producers).toHaveLength(2);
  });
});
