import { InMemoryOutboxStore } from './in-memory-outbox.store';
import type { OutgoingMessage } from './outbox-message';
import type { OutboxTransport } from './outbox-transport.port';
import { message, relay } from './outbox-relay.fixtures';
import { RoundTurns } from './round-turns';

/** Holds every publish until `release()`; records what it was given. */
class HeldTransport implements OutboxTransport {
  readonly name = 'held';
  readonly given: string[] = [];
  private waiting: Array<() => void> = [];

  publish(outgoing: OutgoingMessage): Promise<void> {
    this.given.push(outgoing.envelope.aggregateId);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const waiting = this.waiting;
    this.waiting = [];
    waiting.forEach((resolve) => resolve());
  }
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('OutboxRelay with turns shared between relays (tenant databases)', () => {
  it('claims only in its turn: one round at a time over both relays, handed out in the order asked', async () => {
    const turns = new RoundTurns(1);
    const storeA = new InMemoryOutboxStore();
    const storeB = new InMemoryOutboxStore();
    storeA.add([message('a1'), message('a2')]);
    storeB.add([message('b1')]);
    const transport = new HeldTransport();
    const a = relay(storeA, transport, { owner: 'a', batchSize: 1, turns });
    const b = relay(storeB, transport, { owner: 'b', batchSize: 1, turns });

    const drains = [a.trigger(), b.trigger()];
    await tick();
    // a holds the one turn while its batch publishes: b has not claimed.
    expect(transport.given).toEqual(['a1']);
    expect(storeB.rows[0].leaseToken).toBeUndefined();
    expect(turns.load).toEqual({ running: 1, waiting: 1 });

    transport.release();
    await tick();
    // b asked before a's second round: b goes next, a waits its turn with a2 unclaimed.
    expect(transport.given).toEqual(['a1', 'b1']);
    expect(storeA.rows[1].leaseToken).toBeUndefined();

    transport.release();
    await tick();
    expect(transport.given).toEqual(['a1', 'b1', 'a2']);
    transport.release();
    await Promise.all(drains);
    expect([...storeA.rows, ...storeB.rows].map((row) => row.status)).toEqual(['published', 'published', 'published']);
    expect(turns.load).toEqual({ running: 0, waiting: 0 });
  });
});
