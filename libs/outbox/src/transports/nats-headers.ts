import { NatsRecord } from '@nestjs/microservices';
import { bodyOf, type OutgoingMessage } from '../core/outbox-message';

type NatsHeaders = { set(name: string, value: string): void };

let makeHeaders: (() => NatsHeaders) | undefined;

/** NATS headers must be the client library's own object; it is loaded only when NATS is used. */
export function natsRecordFor(message: OutgoingMessage): NatsRecord {
  makeHeaders ??= (require('@nats-io/transport-node') as { headers: () => NatsHeaders }).headers;
  const headers = makeHeaders();
  for (const [name, value] of Object.entries(message.headers)) headers.set(name, value);
  headers.set('outbox-key', message.key);
  return new NatsRecord(bodyOf(message), headers);
}
