import assert from 'node:assert/strict';
import type { OutgoingMessage } from '../../core/outbox-message';
import type { OutboxTransport } from '../../core/outbox-transport.port';
import { staysAtMost, waitUntil } from './contract-runner';
import { contractOutgoing, freshKey, type BrokerDestination, type OpenTransport, type OutboxTransportContractSubject, type ReceivedMessage } from './transport-contract.context';

/** A case on a reachable broker: a connected transport and a watched destination of its own. */
export interface TransportCaseContext {
  subject: OutboxTransportContractSubject;
  open: OpenTransport;
  destination: BrokerDestination;
  waitMs: number;
}

/** Waits until every message has arrived; returns what arrived, in arrival order. */
export async function arrivals(context: TransportCaseContext, expected: OutgoingMessage[]): Promise<ReceivedMessage[]> {
  const ids = new Set(expected.map((message) => message.envelope.id));
  return waitUntil(`${ids.size} message(s) at ${context.destination.name}`, async () => {
    const received = (await context.destination.received()).filter((message) => ids.has(message.envelope.id));
    return new Set(received.map((message) => message.envelope.id)).size === ids.size && received;
  }, context.waitMs);
}

/** How long a case keeps watching after every message arrived, so that a copy sent again late is counted. */
const LATE_COPY_GRACE_MS = 1_000;

/** Waits until every message has arrived, then fails if any arrives a second time within the grace period. */
async function arrivalsEachOnce(context: TransportCaseContext, expected: OutgoingMessage[]): Promise<ReceivedMessage[]> {
  await arrivals(context, expected);
  const ids = new Set(expected.map((message) => message.envelope.id));
  const copies = async () => (await context.destination.received()).filter((message) => ids.has(message.envelope.id)).length;
  await staysAtMost(`arrivals of ${ids.size} message(s) at ${context.destination.name} (a message arrived more than once)`, copies, ids.size, LATE_COPY_GRACE_MS);
  return (await context.destination.received()).filter((message) => ids.has(message.envelope.id));
}

/** Per key, the ids in the order they arrived (or were given). */
function idsByKey(messages: Array<{ envelope: { id: string; aggregateId: string } }>): Record<string, string[]> {
  const byKey: Record<string, string[]> = {};
  for (const { envelope } of messages) (byKey[envelope.aggregateId] ??= []).push(envelope.id);
  return byKey;
}

/** Messages of two keys, interleaved: a1 b1 a2 b2 … */
function interleaved(destination: string, perKey: number): OutgoingMessage[] {
  const [a, b] = [freshKey('a'), freshKey('b')];
  return Array.from({ length: perKey }, (_, n) => [contractOutgoing(destination, a, n + 1), contractOutgoing(destination, b, n + 1)]).flat();
}

export async function describesItself(transport: OutboxTransport, declared: OutboxTransportContractSubject['batching']): Promise<void> {
  assert.equal(typeof transport.name, 'string');
  assert.ok(transport.name.length > 0, 'name is empty');
  assert.ok(transport.acknowledgement === undefined || ['broker', 'none'].includes(transport.acknowledgement), `unknown acknowledgement "${transport.acknowledgement}"`);
  const batching = typeof transport.publishBatch !== 'function' ? 'none' : transport.keepsKeyOrderInBatch === true ? 'keeps-key-order' : 'unordered';
  if (transport.keepsKeyOrderInBatch) assert.equal(typeof transport.publishBatch, 'function', 'keepsKeyOrderInBatch is set without publishBatch');
  assert.equal(batching, declared, 'the transport does not batch as the subject says');
}

export async function publishResolvesOnceAtTheBroker(context: TransportCaseContext): Promise<void> {
  const message = contractOutgoing(context.destination.name, freshKey('once'));
  await context.open.transport.publish(message);
  // Closed at once: a transport that resolved before the broker had the message may lose it here.
  await context.open.close();
  const received = await arrivalsEachOnce(context, [message]);
  assert.equal(received.length, 1, 'the message arrived more than once');
}

export async function envelopeArrivesIntact(context: TransportCaseContext): Promise<void> {
  const message = contractOutgoing(context.destination.name, freshKey('intact'));
  await context.open.transport.publish(message);
  const [received] = await arrivals(context, [message]);
  // Compared as JSON carries it: fields left undefined are absent on the wire.
  assert.deepEqual(plain(received.envelope), plain(message.envelope), 'the envelope changed on the way');
  if (context.subject.carries.key) assert.equal(received.key, message.key, 'the key is not the aggregate id');
  if (context.subject.carries.headers) {
    const headers = received.headers ?? {};
    for (const [name, value] of Object.entries(message.headers)) assert.equal(headers[name], value, `header "${name}"`);
  }
}

export async function publishesOneKeyInOrder(context: TransportCaseContext): Promise<void> {
  const messages = interleaved(context.destination.name, 4);
  for (const message of messages) await context.open.transport.publish(message);
  assert.deepEqual(idsByKey(await arrivals(context, messages)), idsByKey(messages));
}

export async function batchReportsEachMessage(context: TransportCaseContext): Promise<void> {
  // One message per key: the relay never batches two of one key unless keepsKeyOrderInBatch.
  const messages = Array.from({ length: 6 }, (_, n) => contractOutgoing(context.destination.name, freshKey(`batch${n}`), n));
  const outcomes = await publishBatchOf(context.open.transport, messages);
  assert.equal(outcomes.length, messages.length, 'publishBatch must return one outcome per message');
  outcomes.forEach((outcome, index) => assert.equal(outcome, undefined, `message ${index} failed on a healthy broker: ${String(outcome)}`));
  const received = await arrivalsEachOnce(context, messages);
  assert.equal(received.length, messages.length, 'a message arrived more than once');
}

export async function batchKeepsKeyOrder(context: TransportCaseContext): Promise<void> {
  const messages = interleaved(context.destination.name, 5);
  const outcomes = await publishBatchOf(context.open.transport, messages);
  assert.deepEqual(outcomes, messages.map(() => undefined), 'a message of the batch failed on a healthy broker');
  assert.deepEqual(idsByKey(await arrivals(context, messages)), idsByKey(messages));
}

/** Settles within `ms`, or reports that it is still pending (never an unhandled rejection). */
export async function settleWithin<T>(promise: Promise<T>, ms: number): Promise<{ state: 'resolved'; value: T } | { state: 'rejected' | 'pending' }> {
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<{ state: 'pending' }>((resolve) => (timer = setTimeout(() => resolve({ state: 'pending' }), ms)));
  const settled = promise.then(
    (value) => ({ state: 'resolved' as const, value }),
    () => ({ state: 'rejected' as const }),
  );
  try {
    return await Promise.race([settled, pending]);
  } finally {
    clearTimeout(timer);
  }
}

export async function unreachablePublishFails(open: OpenTransport, publishTimeoutMs: number): Promise<void> {
  const outcome = await settleWithin(open.transport.publish(contractOutgoing('outbox-contract-unreachable', freshKey('lost'))), publishTimeoutMs);
  assert.notEqual(outcome.state, 'resolved', 'publish resolved although the broker cannot be reached: the relay would mark the message published');
}

export async function unreachableBatchAcknowledgesNone(open: OpenTransport, publishTimeoutMs: number): Promise<void> {
  const messages = [0, 1, 2].map((n) => contractOutgoing('outbox-contract-unreachable', freshKey(`lost${n}`), n));
  const outcome = await settleWithin(publishBatchOf(open.transport, messages), publishTimeoutMs);
  if (outcome.state !== 'resolved') return;
  assert.equal(outcome.value.length, messages.length, 'publishBatch must return one outcome per message');
  outcome.value.forEach((result, index) => assert.ok(result instanceof Error, `message ${index} reported acknowledged although the broker cannot be reached`));
}

async function publishBatchOf(transport: OutboxTransport, messages: OutgoingMessage[]): Promise<Array<Error | undefined>> {
  assert.ok(transport.publishBatch, 'the transport has no publishBatch');
  return Array.from(await transport.publishBatch(messages));
}

const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));
