import { classifyFailure } from './failure-classification';
import { InMemoryOutboxStore } from './in-memory-outbox.store';
import { OutboxNonRetryableError } from './outbox.errors';
import { OutboxRelay } from './outbox-relay';
import type { OutboxTransport } from './outbox-transport.port';
import { RetryPolicy } from './retry-policy';

describe('classifyFailure', () => {
  it('makes a OutboxNonRetryableError final, also as the cause of another error', () => {
    expect(classifyFailure(new OutboxNonRetryableError('bad'), 'bad').final).toBe(true);
    expect(classifyFailure(new Error('wrapped', { cause: new OutboxNonRetryableError('bad') }), 'wrapped').final).toBe(true);
    expect(classifyFailure(new Error('timeout'), 'timeout').final).toBe(false);
  });

  it('asks retryIf about other errors, and retries when retryIf throws', () => {
    const retryIf = (error: unknown) => !(error instanceof TypeError);
    expect(classifyFailure(new TypeError('schema'), 'schema', retryIf).final).toBe(true);
    expect(classifyFailure(new Error('later'), 'later', retryIf).final).toBe(false);
    expect(classifyFailure(new OutboxNonRetryableError('no'), 'no', () => true).final).toBe(true);
    expect(classifyFailure(new Error('x'), 'x', () => { throw new Error('bug in retryIf'); }).final).toBe(false);
  });
});

describe('OutboxRelay with failures that should not be retried', () => {
  const silent = { log: () => undefined, warn: () => undefined, error: () => undefined };
  const row = (id: string, aggregateId: string) => ({
    id, type: 't', version: 1, aggregateType: 'a', aggregateId, transport: 'default', destination: 'd',
    occurredAt: new Date(0), headers: {}, payloadJson: '{}',
  });

  it('sends a row to dead after one attempt, keeping the error, and retries the rest', async () => {
    const store = new InMemoryOutboxStore(() => 0);
    store.add([row('poison', 'p'), row('flaky', 'f'), row('refused', 'r')]);
    const transport: OutboxTransport = {
      name: 'test',
      async publish(message) {
        if (message.envelope.id === 'poison') throw new OutboxNonRetryableError('schema rejected: "amount" missing');
        if (message.envelope.id === 'refused') throw new RangeError('403 forbidden');
        throw new Error('broker busy');
      },
    };
    const relay = new OutboxRelay({
      store, transports: new Map([['default', transport]]), retryPolicy: new RetryPolicy(10, { initialMs: 1_000, maxMs: 1_000, jitter: 0 }),
      owner: 'r', batchSize: 10, leaseMs: 30_000, publishTimeoutMs: 1_000, logger: silent,
      retryIf: (error) => !(error instanceof RangeError),
    });
    expect(await relay.publishBatch()).toEqual({ claimed: 3, published: 0, retried: 1, dead: 2 });
    expect(store.rows.map((r) => [r.message.id, r.status, r.attempts, r.lastError])).toEqual([
      ['poison', 'dead', 1, 'schema rejected: "amount" missing'],
      ['flaky', 'pending', 1, 'broker busy'],
      ['refused', 'dead', 1, '403 forbidden'],
    ]);
    await relay.stop(100);
  });
});
