/* What the relay's unit specs share: rows, a broker double and a relay over the in-memory store. */
import { InMemoryOutboxStore } from './in-memory-outbox.store';
import type { NewOutboxMessage, OutgoingMessage } from './outbox-message';
import { OutboxRelay, type OutboxRelayConfig } from './outbox-relay';
import type { OutboxTransport } from './outbox-transport.port';
import { RetryPolicy } from './retry-policy';

let sequence = 0;
/** How many rows `message` has made in this spec file; row n has the id `m-n`. */
export const messagesMade = (): number => sequence;

export function message(aggregateId: string, type = 'thing.happened'): NewOutboxMessage {
  sequence += 1;
  return {
    id: `m-${sequence}`,
    type,
    version: 1,
    aggregateType: 'thing',
    aggregateId,
    transport: 'default',
    destination: 'things',
    occurredAt: new Date(0),
    headers: {},
    payloadJson: JSON.stringify({ n: sequence }),
  };
}

/** Acknowledges every publish, unless told to refuse an id a number of times or to hang. */
export class RecordingTransport implements OutboxTransport {
  readonly name = 'recording';
  readonly delivered: OutgoingMessage[] = [];
  failNext = new Map<string, number>();
  hang = false;

  async publish(outgoing: OutgoingMessage): Promise<void> {
    if (this.hang) return new Promise(() => undefined);
    const failures = this.failNext.get(outgoing.envelope.id) ?? 0;
    if (failures > 0) {
      this.failNext.set(outgoing.envelope.id, failures - 1);
      throw new Error(`broker refused ${outgoing.envelope.id}`);
    }
    this.delivered.push(outgoing);
  }
}

const silent = { log: () => undefined, warn: () => undefined, error: () => undefined };

export function relay(store: InMemoryOutboxStore, transport: OutboxTransport, overrides: Partial<OutboxRelayConfig> = {}): OutboxRelay {
  return new OutboxRelay({
    store,
    transports: new Map([['default', transport]]),
    retryPolicy: new RetryPolicy(3, { initialMs: 1_000, maxMs: 10_000, jitter: 0 }),
    owner: 'relay-a',
    batchSize: 10,
    leaseMs: 30_000,
    publishTimeoutMs: 5_000,
    logger: silent,
    ...overrides,
  });
}

/**
 * What every relay spec starts from, fresh before each test of the describe that calls it: a clock
 * the test moves (`bench.now`), an in-memory store on that clock and a recording transport.
 */
export function relayBench(): { now: number; store: InMemoryOutboxStore; transport: RecordingTransport } {
  const bench = { now: 0 } as { now: number; store: InMemoryOutboxStore; transport: RecordingTransport };
  beforeEach(() => {
    bench.now = 1_000_000;
    bench.store = new InMemoryOutboxStore(() => bench.now);
    bench.transport = new RecordingTransport();
  });
  return bench;
}

/** Holds every publish until the test lets it go, so that the test sees what is in flight at once. */
export class GatedTransport implements OutboxTransport {
  readonly name = 'gated';
  readonly delivered: string[] = [];
  readonly waiting = new Map<string, () => void>();
  /** Ids whose publish never answers (a broker that hangs on them). */
  readonly hanging = new Set<string>();
  mostAtOnce = 0;

  publish(outgoing: OutgoingMessage): Promise<void> {
    const id = outgoing.envelope.id;
    if (this.hanging.has(id)) return new Promise(() => undefined);
    return new Promise((resolve) => {
      this.waiting.set(id, () => {
        this.waiting.delete(id);
        this.delivered.push(id);
        resolve();
      });
      this.mostAtOnce = Math.max(this.mostAtOnce, this.waiting.size);
    });
  }

  releaseAll(): void {
    [...this.waiting.values()].forEach((release) => release());
  }
}

/** Lets promises and timers of the relay run until `done` holds; fails after a 5 s deadline (a loaded machine delays timers). */
export async function until(what: string, done: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    if (done()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (!done()) throw new Error(`still waiting for: ${what}`);
}

/**
 * Lets the transport's publishes go one at a time, the newest first (the order in which a broker
 * might answer), until `total` were delivered. Returns whether two publishes of one key were ever
 * outstanding together (which would let a broker reorder them).
 */
export async function letGoNewestFirst(transport: GatedTransport, total: number, keyOf: ReadonlyMap<string, string>, between: () => Promise<void>): Promise<boolean> {
  let heldTwoOfOneKey = false;
  while (transport.delivered.length < total) {
    await until('a publish to let go', () => transport.waiting.size > 0);
    const outstanding = [...transport.waiting.keys()].map((id) => keyOf.get(id));
    heldTwoOfOneKey ||= new Set(outstanding).size < outstanding.length;
    [...transport.waiting.values()].at(-1)!();
    await between();
  }
  return heldTwoOfOneKey;
}
