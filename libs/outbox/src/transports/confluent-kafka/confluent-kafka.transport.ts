import type { EnvelopeFormat } from '../../core/cloudevents/envelope-options';
import { bodyOf, type OutgoingMessage } from '../../core/outbox-message';
import type { OutboxTransport } from '../../core/outbox-transport.port';
import { closedBeforeAcknowledged, notAcknowledged, notConnected, notProduced } from './confluent-kafka.messages';
import { resolveConfluentKafkaOptions, type ConfluentKafkaSettings, type ConfluentKafkaTransportOptions } from './confluent-kafka.options';
import { loadConfluentKafka, type DeliveryReport, type LibrdkafkaError, type NativeProducer } from './confluent-kafka.peer';
import { DeliveryBatch } from './delivery-batch';

/** What a produced message carries to its delivery report. */
interface Pending {
  batch: DeliveryBatch;
  index: number;
}

/**
 * Publishes to Kafka through librdkafka (`@confluentinc/kafka-javascript`, an optional peer):
 * messages are encoded and sent on librdkafka's own threads, with several produce requests in
 * flight. A message counts as published only once its delivery report says the brokers
 * acknowledged it with `acks: all`; the idempotent producer (default) keeps each partition's order
 * across librdkafka's retries. A claimed batch is produced in one pass, so a key's messages land on
 * its partition in the order given (`keepsKeyOrderInBatch`).
 */
export class ConfluentKafkaTransport implements OutboxTransport {
  readonly name: string;
  readonly acknowledgement = 'broker' as const;
  readonly keepsKeyOrderInBatch = true;
  readonly envelopeFormats: readonly EnvelopeFormat[] = ['outbox', 'cloudevents-binary', 'cloudevents-structured'];
  readonly encodedBodies = true;
  private readonly settings: ConfluentKafkaSettings;
  private opening: Promise<NativeProducer> | undefined;
  private readonly inFlight = new Set<DeliveryBatch>();

  constructor(options: ConfluentKafkaTransportOptions) {
    this.settings = resolveConfluentKafkaOptions(options);
    this.name = this.settings.name;
    // Fails at construction (module start-up), not at the first publish, when the package or its addon is missing.
    loadConfluentKafka();
  }

  /**
   * Opens the producer ahead of the first publish, and fetches the metadata of `destinations`:
   * librdkafka holds the first messages to a topic it has no metadata for until the brokers
   * answered, so the first batch waits for one more round trip otherwise. A topic whose metadata
   * does not come (it does not exist, and the brokers create none) is left to the first publish.
   */
  async connect(destinations: readonly string[] = []): Promise<void> {
    const producer = await this.producer();
    const timeout = this.settings.connectTimeoutMs;
    await Promise.all([...new Set(destinations)].map((topic) => new Promise<void>((resolve) => producer.getMetadata({ allTopics: false, topic, timeout }, () => resolve()))));
  }

  async publish(message: OutgoingMessage): Promise<void> {
    const [failure] = await this.publishBatch([message]);
    if (failure) throw failure;
  }

  async publishBatch(messages: OutgoingMessage[]): Promise<Array<Error | undefined>> {
    const producer = await this.producer();
    const batch = new DeliveryBatch(messages.length);
    this.inFlight.add(batch);
    for (let index = 0; index < messages.length; index++) {
      const message = messages[index];
      try {
        const pending: Pending = { batch, index };
        producer.produce(message.destination, null, message.encoded ?? Buffer.from(JSON.stringify(bodyOf(message))), message.key, null, pending, headersOf(message));
      } catch (error) {
        // Queue full or producer failed: nothing after it is handed over, so no later message of a key overtakes it.
        batch.failFrom(index, new Error(notProduced(this.name, describe(error)), { cause: error }));
        break;
      }
    }
    try {
      return await batch.outcomes;
    } finally {
      this.inFlight.delete(batch);
    }
  }

  /**
   * Waits up to `closeTimeoutMs` for queued messages, disconnects, and fails whatever is still
   * unacknowledged. Safe to call twice; a later publish opens a new producer.
   */
  async close(): Promise<void> {
    const opening = this.opening;
    this.opening = undefined;
    const producer = await opening?.catch(() => undefined);
    if (producer) await new Promise<void>((resolve) => producer.disconnect(this.settings.closeTimeoutMs, () => resolve()));
    const closed = new Error(closedBeforeAcknowledged(this.name));
    for (const batch of this.inFlight) batch.failUnsettled(closed);
  }

  private producer(): Promise<NativeProducer> {
    this.opening ??= this.open().catch((error: unknown) => {
      // A failed connection is not kept: the next publish tries again.
      this.opening = undefined;
      throw error;
    });
    return this.opening;
  }

  private open(): Promise<NativeProducer> {
    const { Producer } = loadConfluentKafka();
    const producer = new Producer(this.settings.librdkafka);
    producer.on('delivery-report', (error, report) => this.delivered(producer, error, report));
    // librdkafka reconnects by itself; its transient errors (broker down) reach each message's delivery report.
    producer.on('event.error', () => undefined);
    const timeout = this.settings.connectTimeoutMs;
    const failed = (error: LibrdkafkaError) => new Error(notConnected(this.name, describe(error)), { cause: error });
    return new Promise<NativeProducer>((resolve, reject) => {
      producer.connect({ timeout }, (error) => {
        if (error) return reject(failed(error));
        // Delivery reports are polled on librdkafka's thread, never on a timer of the event loop.
        producer.setPollInBackground(true);
        // The idempotent producer asks for its producer id when metadata arrives from a broker that
        // is up. Connecting reads metadata from the bootstrap address, which librdkafka drops for
        // the broker it names; when that answer comes first, the id waits for a 500 ms retry
        // timer, and so does the first batch. A brokers-only request, answered by the named
        // broker, asks at once.
        producer.getMetadata({ allTopics: false, timeout }, (metadataError) => {
          if (!metadataError) return resolve(producer);
          producer.disconnect(0, () => undefined);
          reject(failed(metadataError));
        });
      });
    });
  }

  private delivered(producer: NativeProducer, error: LibrdkafkaError | null, report: DeliveryReport): void {
    const { batch, index } = report.opaque as Pending;
    batch.settle(index, error ? new Error(notAcknowledged(this.name, describe(error)), { cause: error }) : undefined);
    if (error?.isFatal) void this.replace(producer);
  }

  /** A fatal error (the idempotent producer lost its sequence) leaves the producer unusable: the next publish opens another. */
  private async replace(producer: NativeProducer): Promise<void> {
    const current = await this.opening?.catch(() => undefined);
    if (current !== producer) return;
    this.opening = undefined;
    producer.disconnect(0, () => undefined);
  }
}

/**
 * Headers as librdkafka's binding takes them, an object of one name each. Assigned rather than
 * built with a computed key (`{ [name]: value }`), which costs V8 four times as much; this runs
 * for each of a message's headers on the relay's one thread.
 */
function headersOf(message: OutgoingMessage): Array<Record<string, string>> {
  const headers: Array<Record<string, string>> = [];
  for (const name in message.headers) {
    const header: Record<string, string> = {};
    header[name] = message.headers[name];
    headers.push(header);
  }
  return headers;
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as LibrdkafkaError).code;
  return code === undefined ? error.message : `${error.message} (librdkafka error ${code})`;
}
