import { InMemoryOutboxStore } from './in-memory-outbox.store';
import type { ClaimedMessage } from './outbox-message';
import type { ClaimRequest, OutboxStore } from './outbox-store.port';
import type { OutboxTransport } from './outbox-transport.port';
import { GatedTransport, letGoNewestFirst, message, RecordingTransport, relay, until } from './outbox-relay.fixtures';
import { RoundTurns } from './round-turns';

/**
 * Claims of one relay overlap: the in-memory store leases at once and the claim returns only when
 * the test lets it, as a database claim holds its rows (locked, then leased) before its answer arrives.
 */
class SlowClaims {
  readonly pending: Array<() => void> = [];
  running = 0;
  mostAtOnce = 0;
  calls = 0;
  /** When set, each claim answers by itself after this many turns of the event loop. */
  autoAnswerAfter: ((call: number) => number) | undefined;

  constructor(store: InMemoryOutboxStore) {
    const claim = store.claim.bind(store);
    store.claim = async (request: ClaimRequest): Promise<ClaimedMessage[]> => {
      const call = ++this.calls;
      this.running += 1;
      this.mostAtOnce = Math.max(this.mostAtOnce, this.running);
      const claimed = await claim(request);
      await new Promise<void>((answer) => {
        if (this.autoAnswerAfter) void turns(this.autoAnswerAfter(call)).then(answer);
        else this.pending.push(answer);
      });
      this.running -= 1;
      return claimed;
    };
  }

  answerAll(): void {
    this.pending.splice(0).forEach((answer) => answer());
  }
}


async function turns(count: number): Promise<void> {
  for (let turn = 0; turn < count; turn++) await new Promise((resolve) => setImmediate(resolve));
}


describe('OutboxRelay with overlapping claims', () => {
  let store: InMemoryOutboxStore;
  let claims: SlowClaims;
  let transport: GatedTransport;
  const leaseTokens = () => new Set(store.rows.filter((row) => row.status === 'pending' && row.leaseToken).map((row) => row.leaseToken));

  beforeEach(() => {
    store = new InMemoryOutboxStore(() => 1_000_000);
    claims = new SlowClaims(store);
    transport = new GatedTransport();
  });

  it('starts the next claims while an earlier claim is still running, once a full batch shows a backlog', async () => {
    store.add(Array.from({ length: 50 }, (_, index) => message(`k${index}`)));
    const drained = relay(store, transport, { batchSize: 10, maxBatchesInFlight: 3 }).trigger();

    await until('the first claim', () => claims.pending.length === 1);
    await turns(5);
    expect(claims.running).toBe(1); // nothing shows a backlog yet: one claim at a time

    claims.answerAll();
    // The first batch publishes (held) while the two next claims run side by side.
    await until('two claims at once', () => claims.pending.length === 2);
    expect(transport.waiting.size).toBe(10);
    expect(leaseTokens().size).toBe(3);
    claims.answerAll();
    await until('three batches handed to the broker', () => transport.waiting.size === 30);
    await turns(5);
    expect(claims.running).toBe(0); // no fourth claim while three rounds are under way

    let mostLeases = 0;
    while (transport.delivered.length < 50) {
      claims.answerAll();
      mostLeases = Math.max(mostLeases, leaseTokens().size);
      [...transport.waiting.values()][0]?.();
      await turns(1);
    }
    // The drain ends with empty claims, answered as they come.
    claims.autoAnswerAfter = () => 1;
    claims.answerAll();
    await drained;
    expect(mostLeases).toBeLessThanOrEqual(3);
    expect(claims.mostAtOnce).toBe(2);
    expect(new Set(transport.delivered).size).toBe(50);
    expect(store.rows.every((row) => row.status === 'published')).toBe(true);
  });

  it('keeps each aggregate in order when claims overlap, and an empty claim among them does not end the drain', async () => {
    const keys = ['a', 'b', 'c'];
    const written = Array.from({ length: 60 }, (_, index) => message(keys[index % 3]));
    store.add(written);
    const keyOf = new Map(written.map((row) => [row.id, row.aggregateId]));
    // Claims answer after 1 to 4 turns, so later claims often come back before earlier ones.
    claims.autoAnswerAfter = (call) => 1 + ((call * 7) % 4);
    const drained = relay(store, transport, { batchSize: 4, maxBatchesInFlight: 3 }).trigger();

    const heldTwoOfOneKey = await letGoNewestFirst(transport, written.length, keyOf, () => turns(2));
    await drained;
    expect(claims.mostAtOnce).toBeGreaterThan(1);
    expect(heldTwoOfOneKey).toBe(false);
    for (const key of keys) {
      const inOrder = written.filter((row) => row.aggregateId === key).map((row) => row.id);
      expect(transport.delivered.filter((id) => keyOf.get(id) === key)).toEqual(inOrder);
    }
  });

  it('claims one batch at a time on a quiet table, whatever maxBatchesInFlight allows', async () => {
    store.add([message('quiet')]);
    claims.autoAnswerAfter = () => 1;
    const drained = relay(store, transport, { batchSize: 10, maxBatchesInFlight: 4 }).trigger();

    await until('the row handed to the broker', () => transport.waiting.size === 1);
    transport.waiting.values().next().value!();
    await drained;
    expect(claims.mostAtOnce).toBe(1);
    expect(claims.calls).toBeLessThanOrEqual(3);
    expect(store.rows[0].status).toBe('published');
  });
});

describe('OutboxRelay on a store that settles and claims in one statement', () => {
  let store: InMemoryOutboxStore & Pick<OutboxStore, 'settleAndClaim'>;
  let combined: number;

  beforeEach(() => {
    combined = 0;
    const inMemory = new InMemoryOutboxStore(() => 1_000_000);
    // As the PostgreSQL store does it in one statement: the settle, then the claim that sees it.
    const settleAndClaim: OutboxStore['settleAndClaim'] = async (token, published, next) => {
      combined += 1;
      const settled = await inMemory.markPublished(token, published);
      return { settled, claimed: await inMemory.claim(next) };
    };
    store = Object.assign(inMemory, { settleAndClaim });
  });

  it("claims a busy aggregate's next run with the settle of its previous one, in order", async () => {
    const written = Array.from({ length: 35 }, () => message('hot'));
    store.add(written);
    const delivered: string[] = [];
    const transport: OutboxTransport = { name: 'instant', publish: async (outgoing) => void delivered.push(outgoing.envelope.id) };

    let claims = 0;
    const claim = store.claim.bind(store);
    store.claim = (request) => ((claims += 1), claim(request));

    await relay(store, transport, { batchSize: 10, maxBatchesInFlight: 2 }).trigger();

    expect(delivered).toEqual(written.map((row) => row.id));
    // The first batch's, the other slot's (empty: the key is leased) and the last, empty one: no
    // empty claim per chained settle, since the claim in that settle already saw what it unblocked.
    expect(claims - combined).toBe(3); // store.claim also counts the claims made inside settleAndClaim
    expect(store.rows.every((row) => row.status === 'published')).toBe(true);
    // Batches 2, 3 and 4 came with the settles of 1, 2 and 3; the last (5 rows) was settled alone.
    expect(combined).toBe(3);
  });

  it('settles a batch with a failed row on its own, and chains nothing while turns are shared', async () => {
    const written = Array.from({ length: 20 }, (_, index) => message(`k${index}`));
    store.add(written);
    const refusing = new RecordingTransport();
    refusing.failNext.set(written[3].id, 1);

    await relay(store, refusing, { batchSize: 10, maxBatchesInFlight: 1 }).trigger();
    // Only the second batch, published whole, was settled with a claim (which found nothing: the failed row waits for its retry).
    expect(combined).toBe(1);
    expect(store.rows.filter((row) => row.status === 'published')).toHaveLength(19);
    expect(store.rows[3]).toMatchObject({ status: 'pending', lastError: `broker refused ${written[3].id}`, leaseToken: undefined });

    store.add(Array.from({ length: 30 }, (_, index) => message(`t${index}`)));
    await relay(store, new RecordingTransport(), { batchSize: 10, maxBatchesInFlight: 1, turns: new RoundTurns(1) }).trigger();
    expect(combined).toBe(1); // none more: each claim waits for its turn
    expect(store.rows.filter((row) => row.status === 'published')).toHaveLength(49);
  });
});
