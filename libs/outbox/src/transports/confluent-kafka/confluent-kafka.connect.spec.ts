import { ConfluentKafkaTransport } from './confluent-kafka.transport';

// The binding stands in for librdkafka here: what is checked is the order of the calls the
// transport makes while connecting. test/transports/confluent-kafka.contract.e2e-spec.ts runs the
// real producer against the Kafka test broker.
const producers: FakeProducer[] = [];

class FakeProducer {
  readonly calls: string[] = [];
  metadataOptions: unknown;
  answerMetadata!: (error: Error | null) => void;
  readonly topicMetadata: Array<{ topic: string; answer: (error: Error | null) => void }> = [];

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

  getMetadata(options: { topic?: string }, callback: (error: Error | null) => void): void {
    if (options.topic !== undefined) {
      this.calls.push(`metadata of ${options.topic}`);
      this.topicMetadata.push({ topic: options.topic, answer: callback });
      return;
    }
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

  it("given destinations, fetches each topic's metadata once connected, and a topic without any does not fail the connection", async () => {
    const transport = new ConfluentKafkaTransport({ brokers: ['127.0.0.1:9092'], connectTimeoutMs: 4_000 });
    let connected = false;
    const connecting = transport.connect(['orders', 'parcels', 'orders']).then(() => (connected = true));
    await new Promise((resolve) => setImmediate(resolve));
    const [producer] = producers;
    producer.answerMetadata(null);
    await new Promise((resolve) => setImmediate(resolve));

    expect(producer.calls).toEqual(['connect', 'poll in background', 'metadata', 'metadata of orders', 'metadata of parcels']);
    producer.topicMetadata[0].answer(null);
    await new Promise((resolve) => setImmediate(resolve));
    expect(connected).toBe(false);

    producer.topicMetadata[1].answer(new Error('Broker: Unknown topic or partition'));
    await connecting;
    expect(connected).toBe(true);
  });
});
