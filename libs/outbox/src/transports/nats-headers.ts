import { NatsRecord } from '@nestjs/microservices';
import { bodyOf, type OutgoingMessage } from '../core/outbox-message';
import { loadOptionalPeers } from '../core/optional-peer';
import { natsNeedsPackages } from './nats.messages';

type NatsHeaders = { set(name: string, value: string): void };

let makeHeaders: (() => NatsHeaders) | undefined;

/** NATS headers must be the client library's own object; it is loaded only when NATS is used. */
export function natsRecordFor(message: OutgoingMessage): NatsRecord {
  makeHeaders ??= loadOptionalPeers<[{ headers: () => NatsHeaders }]>(['@nats-io/transport-node'], (absent) => natsNeedsPackages('A message sent over NATS (its headers)', absent))[0].headers;
  const headers = makeHeaders();
  for (const [name, value] of Object.entries(message.headers)) headers.set(name, value);
  headers.set('outbox-key', message.key);
  return new NatsRecord(bodyOf(message), headers);
}
