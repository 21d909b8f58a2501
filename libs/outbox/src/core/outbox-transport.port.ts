import type { EnvelopeFormat } from './cloudevents/envelope-options';
import type { OutgoingMessage } from './outbox-message';

/**
 * What "published" means for a transport:
 * - `broker`: the broker confirmed it has the message (Kafka acks, RabbitMQ publisher confirm,
 *   JetStream publish ack, MQTT PUBACK);
 * - `none`: the message was handed to the connection; a broker crash can lose it.
 */
export type Acknowledgement = 'broker' | 'none';

/**
 * Publishes to a broker. `publish` resolves only once the message is as safe as
 * `acknowledgement` says, and rejects otherwise; the relay marks the row published only after.
 */
export interface OutboxTransport {
  /** Shown in logs and errors, e.g. `kafka` or `tcp`. */
  readonly name: string;
  /** Default `'broker'` for custom transports: say `'none'` if yours cannot confirm. */
  readonly acknowledgement?: Acknowledgement;
  /** Why `acknowledgement` is `none`, for the startup warning. */
  readonly acknowledgementNote?: string;
  publish(message: OutgoingMessage): Promise<void>;
  /**
   * Optional: publishes many messages in as few round trips as the client allows. Resolves with
   * one entry per message, in order: `undefined` when acknowledged, else the error. Never
   * called with two messages of one aggregate and destination, unless `keepsKeyOrderInBatch`.
   */
  publishBatch?(messages: OutgoingMessage[]): Promise<Array<Error | undefined>>;
  /**
   * Optional, default false: `publishBatch` delivers messages of one key in the order given (Kafka:
   * one produce request, same key → same partition), so the relay may hand it several consecutive
   * messages of one aggregate and destination at once. Otherwise the relay sends those one after
   * another.
   */
  readonly keepsKeyOrderInBatch?: boolean;
  /**
   * Optional: opens the connection ahead of the first publish, and readies what the client keeps
   * per destination for `destinations` (Kafka: each topic's partitions and leaders), so that the
   * first batch waits for neither. The relay calls it at bootstrap, before its first claim, with
   * the destinations the application declares; the WAL mode's standby calls it too, so that a
   * takeover publishes at once. A destination that does not exist must not fail it; a failure is
   * logged and otherwise ignored: `publish` reports it.
   */
  connect?(destinations?: readonly string[]): Promise<void>;
  /**
   * Optional, default `['outbox']`: the formats of the `envelope` option this transport sends
   * faithfully. One that lists a CloudEvents format sends `OutgoingMessage.body` (see `bodyOf`) as
   * the body and `headers` as its headers; the module refuses at startup to route a format to a
   * transport that does not list it.
   */
  readonly envelopeFormats?: readonly EnvelopeFormat[];
  /**
   * Optional, default false: the transport sends `OutgoingMessage.encoded`, when set, as the body
   * (Kafka: the record's value). Only such transports get the Schema Registry's wire format; others
   * keep sending JSON.
   */
  readonly encodedBodies?: boolean;
  /** Optional: called once when the application shuts down, after the relay has stopped. */
  close?(): Promise<void>;
}

export function isOutboxTransport(value: unknown): value is OutboxTransport {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as OutboxTransport).publish === 'function' &&
    typeof (value as OutboxTransport).name === 'string'
  );
}
