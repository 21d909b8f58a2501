import { OutboxConfigurationError } from '../../core/outbox.errors';
import { invalidConfluentKafkaOption, ownedLibrdkafkaProperty } from './confluent-kafka.messages';

/** A librdkafka property value, as `@confluentinc/kafka-javascript` takes it. */
export type LibrdkafkaValue = string | number | boolean;

export interface ConfluentKafkaTransportOptions {
  /** Bootstrap brokers, `host:port` (`bootstrap.servers`). Required. */
  brokers: string | string[];
  /** `client.id` the brokers see. Default `'nest-outbox'`. */
  clientId?: string;
  /** Name in logs and errors. Default `'kafka'`. */
  name?: string;
  /**
   * The idempotent producer (`enable.idempotence`): the broker drops a batch it already has and
   * refuses one out of sequence, so retries inside librdkafka neither duplicate nor reorder a
   * partition's messages while up to 5 produce requests are in flight. Turn it off only for a
   * broker that refuses it (Kafka before 0.11, or a cluster denying `IdempotentWrite`); order is then
   * kept with one produce request in flight per broker (`maxInFlight` 1). Default `true`.
   */
  idempotent?: boolean;
  /**
   * Produce requests in flight per broker connection (`max.in.flight.requests.per.connection`).
   * Default `5` with the idempotent producer (the most librdkafka keeps in order), else `1` (the
   * only value that keeps order across retries without it; a larger one is refused).
   */
  maxInFlight?: number;
  /**
   * Milliseconds librdkafka waits for more messages before it sends a produce request
   * (`linger.ms`). The relay hands over whole batches, so a short wait fills requests without
   * delaying a quiet outbox. Default `1` (librdkafka's own default is 5).
   */
  lingerMs?: number;
  /**
   * Milliseconds librdkafka tries to deliver a message before it reports it failed
   * (`message.timeout.ms`); the relay then records the attempt and retries the row later. Keep it
   * below the module's `publishTimeoutMs` (default 10000): a message the relay has given up on and
   * librdkafka still holds would arrive later as a duplicate. Default `8000`.
   */
  deliveryTimeoutMs?: number;
  /** Milliseconds `connect()` waits for the brokers' first metadata answer. Default `10000`. */
  connectTimeoutMs?: number;
  /** Milliseconds `close()` waits for messages still queued before it disconnects. Default `5000`. */
  closeTimeoutMs?: number;
  /**
   * More librdkafka properties (`security.protocol`, `sasl.*`, `ssl.*`, `compression.codec`,
   * `statistics.interval.ms`, …; see librdkafka's CONFIGURATION.md). The properties the options
   * above set, `acks` and the delivery-report switches are the transport's own and refused here.
   * Default: none.
   */
  config?: Record<string, LibrdkafkaValue>;
}

/** The options with their defaults applied, and the librdkafka configuration they make. */
export interface ConfluentKafkaSettings {
  name: string;
  connectTimeoutMs: number;
  closeTimeoutMs: number;
  librdkafka: Record<string, LibrdkafkaValue>;
}

export const CONFLUENT_KAFKA_DEFAULTS = {
  clientId: 'nest-outbox',
  name: 'kafka',
  idempotent: true,
  maxInFlightIdempotent: 5,
  maxInFlightOtherwise: 1,
  lingerMs: 1,
  deliveryTimeoutMs: 8_000,
  connectTimeoutMs: 10_000,
  closeTimeoutMs: 5_000,
} as const;

/** librdkafka properties the transport sets itself, with the option (if any) that sets them. */
const OWNED_PROPERTIES: Record<string, string | undefined> = {
  'bootstrap.servers': 'brokers',
  'metadata.broker.list': 'brokers',
  'client.id': 'clientId',
  'enable.idempotence': 'idempotent',
  'max.in.flight.requests.per.connection': 'maxInFlight',
  'max.in.flight': 'maxInFlight',
  'linger.ms': 'lingerMs',
  'queue.buffering.max.ms': 'lingerMs',
  'message.timeout.ms': 'deliveryTimeoutMs',
  'delivery.timeout.ms': 'deliveryTimeoutMs',
  acks: undefined,
  'request.required.acks': undefined,
  dr_cb: undefined,
  dr_msg_cb: undefined,
  'transactional.id': undefined,
};

/** Applies the defaults once and checks every option; throws `OutboxConfigurationError` naming the culprit. */
export function resolveConfluentKafkaOptions(options: ConfluentKafkaTransportOptions): ConfluentKafkaSettings {
  const brokers = typeof options?.brokers === 'string' ? options.brokers.split(',') : options?.brokers;
  if (!Array.isArray(brokers) || brokers.length === 0 || brokers.some((broker) => typeof broker !== 'string' || !/^\S+:\d+$/.test(broker.trim()))) {
    throw new OutboxConfigurationError(invalidConfluentKafkaOption('brokers', 'one or more "host:port" addresses', options?.brokers));
  }
  const idempotent = options.idempotent ?? CONFLUENT_KAFKA_DEFAULTS.idempotent;
  const maxInFlightLimit = idempotent ? CONFLUENT_KAFKA_DEFAULTS.maxInFlightIdempotent : CONFLUENT_KAFKA_DEFAULTS.maxInFlightOtherwise;
  const maxInFlight = integer('maxInFlight', options.maxInFlight ?? maxInFlightLimit, 1, maxInFlightLimit, idempotent ? '' : ' without the idempotent producer (more would reorder a partition on a retry)');
  const lingerMs = integer('lingerMs', options.lingerMs ?? CONFLUENT_KAFKA_DEFAULTS.lingerMs, 0, 900_000);
  const deliveryTimeoutMs = integer('deliveryTimeoutMs', options.deliveryTimeoutMs ?? CONFLUENT_KAFKA_DEFAULTS.deliveryTimeoutMs, 1, 2_147_483_647);
  const connectTimeoutMs = integer('connectTimeoutMs', options.connectTimeoutMs ?? CONFLUENT_KAFKA_DEFAULTS.connectTimeoutMs, 1, 3_600_000);
  const closeTimeoutMs = integer('closeTimeoutMs', options.closeTimeoutMs ?? CONFLUENT_KAFKA_DEFAULTS.closeTimeoutMs, 0, 3_600_000);
  const name = options.name ?? CONFLUENT_KAFKA_DEFAULTS.name;
  if (typeof name !== 'string' || name.length === 0) throw new OutboxConfigurationError(invalidConfluentKafkaOption('name', 'a non-empty string', name));

  const extra = options.config ?? {};
  if (typeof extra !== 'object' || extra === null || Array.isArray(extra)) {
    throw new OutboxConfigurationError(invalidConfluentKafkaOption('config', 'an object of librdkafka properties', extra));
  }
  for (const [property, value] of Object.entries(extra)) {
    if (property in OWNED_PROPERTIES) throw new OutboxConfigurationError(ownedLibrdkafkaProperty(property, OWNED_PROPERTIES[property]));
    if (!['string', 'number', 'boolean'].includes(typeof value)) {
      throw new OutboxConfigurationError(invalidConfluentKafkaOption(`config["${property}"]`, 'a string, number or boolean', value));
    }
  }
  return {
    name,
    connectTimeoutMs,
    closeTimeoutMs,
    librdkafka: {
      // A real broker disables Nagle on its side; without it here, small requests wait for ACKs.
      'socket.nagle.disable': true,
      ...extra,
      'bootstrap.servers': brokers.map((broker) => broker.trim()).join(','),
      'client.id': options.clientId ?? CONFLUENT_KAFKA_DEFAULTS.clientId,
      // All in-sync replicas: a message counts as published only once the brokers that must keep it have it.
      acks: -1,
      'enable.idempotence': idempotent,
      'max.in.flight.requests.per.connection': maxInFlight,
      'linger.ms': lingerMs,
      'message.timeout.ms': deliveryTimeoutMs,
      // Delivery reports without the payload copied back: the transport only needs the outcome.
      dr_cb: true,
    },
  };
}

function integer(option: string, value: unknown, min: number, max: number, why = ''): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new OutboxConfigurationError(invalidConfluentKafkaOption(option, `an integer from ${min} to ${max}${why}`, value));
  }
  return value;
}
