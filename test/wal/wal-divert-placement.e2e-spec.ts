import type { OutboxTransport } from '@nest-outbox/outbox';
// Watched (not replaced): tells when the stream has decoded the commit that moved s1 to the table.
import { HeldAggregates } from '../../libs/outbox/src/core/stream/held-aggregates';
import type { OutgoingMessage } from '@nest-outbox/outbox/core';
import { waitFor } from '../support/wait-for';
import { noteParcel, tableRelayRows, walSandbox, type WalApp, type WalSandbox } from '../support/wal.harness';

/**
 * Holds `b0` and `c0` each until its gate opens (the stream stalls there), refuses `s1` until
 * `accept()`, and records the rest in the order published.
 */
class StallThenRefuse implements OutboxTransport {
  readonly name = 'stall-then-refuse';
  readonly published: OutgoingMessage[] = [];
  readonly gates = { b0: new Gate(), c0: new Gate() };
  private refusing = true;

  accept(): void {
    this.refusing = false;
  }

  async publish(message: OutgoingMessage): Promise<void> {
    const label = labelOf(message);
    if (label === 'b0' || label === 'c0') await this.gates[label].pass();
    if (label === 's1' && this.refusing) throw new Error('partition of a unavailable');
    this.published.push(message);
  }

  labels(key: string): string[] {
    return this.published.filter((m) => m.key === key).map(labelOf);
  }
}

class Gate {
  reached = false;
  private release!: () => void;
  private readonly opened = new Promise<void>((resolve) => (this.release = resolve));

  open(): void {
    this.release();
  }

  pass(): Promise<void> {
    this.reached = true;
    return this.opened;
  }
}

function labelOf(message: OutgoingMessage): string {
  return (message.envelope.payload as { label: string }).label;
}

// The stream's own overflow rows carry messages committed BEFORE the commit that moves them to the
// table, so they must hold every later message of their aggregate, also one committed before that
// move. The stream tells such rows from rows placed by their inserting commit (a delayed message
// written after a streamed one, see wal-later-row) by the overflow's commit also updating rows: if
// that commit were insert-only, s2 below would be placed after it, stream directly and overtake s1.
describe.each([['row'], ['message']] as const)("WAL delivery mode (write '%s'): the stream's own overflow holds the messages committed before the move", (write) => {
  let sandbox: WalSandbox;
  let app: WalApp;
  const transport = new StallThenRefuse();

  beforeAll(async () => {
    sandbox = await walSandbox('wal_divert');
    app = await sandbox.start({ transport, batchSize: 1, pollIntervalMs: 100, backoff: { initialMs: 100, maxMs: 200 }, wal: { write } });
  });
  afterAll(() => sandbox?.drop());

  it('sends s2 (committed before s1 was moved) to the table behind s1, then publishes s1 and s2 in order', async () => {
    const decoded = jest.spyOn(HeldAggregates.prototype, 'tableWritten');
    try {
      await noteParcel(app, 'b', 'b0');
      await waitFor('b0 to reach the transport, which holds it', () => transport.gates.b0.reached);
      // One commit each, in this order: s1 (refused, so moved), c0 (holds the stream), s2.
      await noteParcel(app, 'a', 's1');
      await noteParcel(app, 'c', 'c0');
      await noteParcel(app, 'a', 's2');
      transport.gates.b0.open();

      // In the table relay's hands: a row the stream moved (write 'row': let go of; 'message': inserted).
      const inTable = async () => (await tableRelayRows(app, 'a')).map((row) => row.label);
      await waitFor('s1 moved to the table', async () => (await inTable()).includes('s1'));
      // s2 is checked only after the stream decoded the move (the table is read again then, placing rows).
      const [{ xid }] = await app.dataSource.query(`SELECT xmin::text AS xid FROM outbox_messages WHERE aggregate_id = 'a' AND payload::jsonb->>'label' = 's1'`);
      await waitFor('c0 to reach the transport, which holds it', () => transport.gates.c0.reached);
      await waitFor("the stream to decode the move's commit", () => decoded.mock.calls.some(([commit]) => commit?.xid === Number(xid)));
      transport.gates.c0.open();

      await waitFor('s2 in the table, or published', async () => (await inTable()).includes('s2') || transport.labels('a').includes('s2'));
      expect(transport.labels('a')).toEqual([]);
      expect(await inTable()).toEqual(['s1', 's2']);

      transport.accept();
      await waitFor('s1 and s2 published from the table', () => transport.labels('a').length === 2);
      expect(transport.labels('a')).toEqual(['s1', 's2']);
      expect(transport.labels('b')).toEqual(['b0']);
      expect(transport.labels('c')).toEqual(['c0']);
    } finally {
      decoded.mockRestore();
    }
  });
});
