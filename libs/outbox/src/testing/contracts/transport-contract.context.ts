import { randomUUID } from 'node:crypto';
import type { OutboxEnvelope, OutgoingMessage } from '../../core/outbox-message';
import type { OutboxTransport } from '../../core/outbox-transport.port';
import { toOutgoingMessage } from '../../core/envelope';
import { contractMessage } from './contract-messages';

/** A transport for one test, and how to let go of it. */
export interface OpenTransport {
  transport: OutboxTransport;
  /** Disconnects the client (and calls `transport.close` if it has one). Called once per test. */
  close(): Promise<void>;
}

/** What a consumer at the broker got, as your reader decodes it. */
export interface ReceivedMessage {
  /** The message body: the envelope the transport was given. */
  envelope: OutboxEnvelope;
  /** The broker's message key, where it carries one (see `carries.key`). */
  key?: string;
  /** String headers / properties, where the broker carries them (see `carries.headers`). */
  headers?: Record<string, string>;
}

/** A destination no other test uses, watched at the broker. */
export interface BrokerDestination {
  /** Topic, queue, subject or pattern to publish to. */
  name: string;
  /** Everything that reached the broker there so far, in arrival order. Read by polling. */
  received(): Promise<ReceivedMessage[]>;
  /** Stops watching (consumer, subscription). Called once per test. */
  close(): Promise<void>;
}

export interface OutboxTransportContractSubject {
  /** Shown in the suite's title, e.g. `Pulsar transport`. */
  name: string;
  /** A transport connected to a running broker. */
  createTransport(): Promise<OpenTransport>;
  /** A fresh destination and a reader on it, opened before anything is published there. */
  openDestination(): Promise<BrokerDestination>;
  /**
   * What your transport offers for batches, checked against it: `none` (no `publishBatch`: the relay
   * calls `publish` per message), `unordered` (`publishBatch`, never given two messages of one key)
   * or `keeps-key-order` (`publishBatch` with `keepsKeyOrderInBatch: true`). Cases of what is not
   * offered are reported as skipped.
   */
  batching: 'none' | 'unordered' | 'keeps-key-order';
  /** What the broker carries besides the body, checked when true: the message key, and the headers given. */
  carries: { key: boolean; headers: boolean };
  /**
   * A transport whose broker cannot be reached (a closed port, a stopped broker), to check that a
   * publish does not pretend to succeed. Required: when you cannot build one, say why in
   * `{ notChecked: 'reason' }`; the case is then reported as skipped with that reason in its title.
   */
  unreachable: { createTransport(): Promise<OpenTransport> } | { notChecked: string };
  /** How long a message may take to reach the reader. Default 10000 ms. */
  waitMs?: number;
  /**
   * How long a publish to an unreachable broker may stay pending before the case counts it as not
   * resolved (the relay's `publishTimeoutMs` then fails it). Default 5000 ms.
   */
  publishTimeoutMs?: number;
}

/** An outgoing message exactly as the relay builds one from a claimed row. */
export function contractOutgoing(destination: string, aggregateId: string, n = 0): OutgoingMessage {
  const message = contractMessage({ aggregateId, destination, n });
  return toOutgoingMessage({ ...message, position: String(n + 1), occurredAt: message.occurredAt.toISOString(), attempt: 1 });
}

/** A key of this test's own, so that a shared destination could not mix tests up. */
export const freshKey = (label: string): string => `${label}-${randomUUID().slice(0, 8)}`;
