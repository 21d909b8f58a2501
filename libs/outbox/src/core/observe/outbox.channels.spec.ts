import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { InMemoryOutboxStore } from '../in-memory-outbox.store';
import type { NewOutboxMessage, OutgoingMessage } from '../outbox-message';
import { OutboxRelay } from '../outbox-relay';
import { RetryPolicy } from '../retry-policy';
import { OUTBOX_CHANNELS } from './outbox.channels';

const message = (n: number): NewOutboxMessage => ({
  id: `m-${n}`, type: 'thing.happened', version: 1, aggregateType: 'thing', aggregateId: `a-${n}`,
  transport: 'default', destination: 'things', occurredAt: new Date(Date.now() - 50), headers: {}, payloadJson: '{}',
});

describe('diagnostics channels and outage logs of a relay', () => {
  const events: Array<[string, unknown]> = [];
  // The channels are process-wide: only this test's relay counts (another file's relay may still be settling in this worker).
  const listeners = Object.entries(OUTBOX_CHANNELS).map(
    ([key, name]) => [name, (event: unknown) => (event as { relayId?: string }).relayId === 'relay-1' && events.push([key, event])] as const,
  );

  beforeEach(() => {
    events.length = 0;
    listeners.forEach(([name, listener]) => subscribe(name, listener));
  });

  afterEach(() => listeners.forEach(([name, listener]) => unsubscribe(name, listener)));

  it('publishes claimed, failed, dead and published events with their documented shapes, and logs one line per failed batch', async () => {
    const store = new InMemoryOutboxStore();
    store.add([1, 2, 3].map(message));
    let brokerUp = false;
    const refused = new Set(['m-3']);
    const transport = {
      name: 'test',
      publish: async (outgoing: OutgoingMessage) => {
        if (!brokerUp || refused.has(outgoing.envelope.id)) throw new Error('ECONNREFUSED');
      },
    };
    const lines: string[] = [];
    const relay = new OutboxRelay({
      store,
      transports: new Map([['default', transport]]),
      retryPolicy: new RetryPolicy(2, { initialMs: 20, maxMs: 20, jitter: 0 }),
      owner: 'relay-1',
      batchSize: 10,
      leaseMs: 10_000,
      publishTimeoutMs: 1_000,
      logger: { log: (m) => lines.push(`log ${m}`), warn: (m) => lines.push(`warn ${m}`), error: (m) => lines.push(`error ${m}`) },
    });

    await relay.publishBatch();
    brokerUp = true;
    // The relay wakes itself when the retries come due.
    for (let waited = 0; !events.some(([kind]) => kind === 'dead') && waited < 5_000; waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
    await relay.stop(100);

    const kinds = events.map(([kind]) => kind);
    expect(kinds).toEqual(['claimed', 'failed', 'failed', 'failed', 'claimed', 'published', 'published', 'dead']);
    expect(events[0][1]).toEqual({ relayId: 'relay-1', messages: expect.arrayContaining([expect.objectContaining({ id: 'm-1', attempt: 1 })]) });
    expect(events[1][1]).toEqual({ relayId: 'relay-1', message: expect.objectContaining({ id: 'm-1' }), error: 'ECONNREFUSED', retryInMs: 20, durationMs: expect.any(Number) });
    expect(events[5][1]).toEqual({ relayId: 'relay-1', message: expect.objectContaining({ id: 'm-1', attempt: 2 }), durationMs: expect.any(Number), latencyMs: expect.any(Number) });
    expect((events[5][1] as { latencyMs: number }).latencyMs).toBeGreaterThanOrEqual(50);
    expect(events[7][1]).toMatchObject({ message: { id: 'm-3' }, error: 'ECONNREFUSED', retryInMs: null });

    // Three rows failing is one line, not three; the dead row is an error line; recovery is one line.
    expect(lines).toEqual([
      'warn Outbox relay relay-1: 3 of 3 message(s) to "things" failed (will be retried; attempt 1): ECONNREFUSED',
      'error Outbox relay relay-1: 1 of 3 message(s) to "things" failed (0 will be retried, 1 now dead; attempt 2): ECONNREFUSED',
    ]);
  });
});
