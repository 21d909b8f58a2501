import { Client } from 'pg';
import type { OutboxTransport } from '@nest-outbox/outbox';
import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import type { OutgoingMessage } from '@nest-outbox/outbox/core';
import { waitFor } from '../support/wait-for';
import { walSandbox, type WalSandbox } from '../support/wal.harness';
import { STREAM_OWNER } from '../../libs/outbox/src/sql/dialects/stream-owned-rows.sql';

/** Acknowledges the first `limit` messages, then refuses every publish, as a broker gone down would. */
class BrokerThatGoesDown implements OutboxTransport {
  readonly name = 'going-down';
  readonly published: OutgoingMessage[] = [];
  refused = 0;
  constructor(private readonly limit: number) {}
  async publish(message: OutgoingMessage): Promise<void> {
    if (this.published.length >= this.limit) {
      this.refused++;
      throw new Error('broker down');
    }
    this.published.push(message);
  }
}

const AGGREGATES = 5;
const COMMITS = 50;
const BATCH = 10;
const seq = (m: OutgoingMessage) => (m.envelope.payload as { seq: number }).seq;

describe('WAL delivery mode: a stopped or cut stream replays from the last confirmed commit', () => {
  let sandbox: WalSandbox;
  beforeEach(async () => (sandbox = await walSandbox('wal_replay')));
  afterEach(() => sandbox?.drop());

  /** COMMITS transactions of two events each, aggregates in turn; returns every message id written. */
  async function writeAll(app: Awaited<ReturnType<WalSandbox['start']>>, from = 0): Promise<string[]> {
    const ids: string[] = [];
    for (let n = from; n < from + COMMITS; n++) {
      const events = [0, 1].map((k) => ({ type: 'ledger.moved', aggregateType: 'ledger', aggregateId: `L${(2 * n + k) % AGGREGATES}`, payload: { seq: 2 * n + k }, topic: 'ledger' }));
      ids.push(...(await app.dataSource.transaction((manager) => app.publisher.add(manager, events))));
    }
    return ids;
  }

  it.each(['row', 'message'] as const)('loses nothing when the relay stops with messages unacknowledged or moved to the table, and replays at most one batch again (wal.write %s)', async (write) => {
    const down = new BrokerThatGoesDown(30);
    const first = await sandbox.start({ transport: down, batchSize: BATCH, backoff: { initialMs: 20, maxMs: 50, jitter: 0 }, wal: { write } });
    const ids = await writeAll(first);
    // How many attempts it refuses depends on how the stream cut its batches (an aggregate is in one unsettled batch at most).
    await waitFor('the broker to go down after 30 messages', () => down.published.length === 30 && down.refused > 0);
    // After wal.attemptsBeforeTable (3) failed attempts the batch moves to the table: the stop finds both.
    // Rows it let go to the table (no longer the stream's; with 'message', the rows its messages became): the second relay's table relay publishes them, and its replayed stream must not too.
    const movedRows = async (): Promise<string[]> =>
      (await first.dataSource.query(`SELECT id::text AS id FROM outbox_messages WHERE lease_owner IS DISTINCT FROM $1`, [STREAM_OWNER])).map((row: { id: string }) => row.id);
    await waitFor('the failing batch moved to the table', async () => (await movedRows()).length > 0);
    const moved = await movedRows();
    await first.close();

    // What the first relay had moved to the table after its failed attempts (wal.attemptsBeforeTable)
    // is the second one's table relay's to publish: it polls often here.
    const recording = new RecordingOutboxTransport();
    const second = await sandbox.start({ transport: recording, batchSize: BATCH, pollIntervalMs: 100, wal: { write } });
    const missing = () => ids.filter((id) => !down.published.some((m) => m.envelope.id === id) && !recording.published.some((m) => m.envelope.id === id));
    await waitFor('every message published by one relay or the other', () => missing().length === 0);
    const duplicates = recording.published.filter((m) => down.published.some((d) => d.envelope.id === m.envelope.id));
    expect(duplicates.length).toBeLessThanOrEqual(BATCH);
    expect(moved.filter((id) => recording.published.filter((m) => m.envelope.id === id).length !== 1)).toEqual([]);
    await waitFor('no row left pending in the table', async () => Number((await second.dataSource.query(`SELECT count(*) AS n FROM outbox_messages WHERE status <> 'published'`))[0].n) === 0);
    // Per aggregate, the second relay publishes in the order the events were written: each event's
    // first publication (the promise's terms, as the chaos ledger reads them); a copy of what the
    // first relay had published may come again, within the duplicate bound above.
    for (let a = 0; a < AGGREGATES; a++) {
      const firsts = [...new Map(recording.published.filter((m) => m.key === `L${a}`).map((m) => [m.envelope.id, seq(m)] as const)).values()];
      expect(firsts).toEqual([...firsts].sort((x, y) => x - y));
    }
  });

  it('stops streaming before the transports are closed at shutdown', async () => {
    const log: string[] = [];
    const slow: OutboxTransport = {
      name: 'slow',
      publish: async (message) => {
        log.push(`start ${message.envelope.id}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
        log.push(log.includes('close') ? 'published after close' : `acked ${message.envelope.id}`);
      },
      close: async () => void log.push('close'),
    };
    const app = await sandbox.start({ transport: slow, batchSize: BATCH });
    await writeAll(app);
    await waitFor('the stream publishing', () => log.some((line) => line.startsWith('acked')));
    await app.close();
    expect(log.at(-1)).toBe('close');
    expect(log).not.toContain('published after close');
  });

  it('reads on after its replication connection is cut, without losing or reordering anything', async () => {
    const recording = new RecordingOutboxTransport();
    const app = await sandbox.start({ transport: recording, batchSize: BATCH });
    const before = await writeAll(app);
    await waitFor('the first half published', () => before.every((id) => recording.published.some((m) => m.envelope.id === id)));
    const admin = new Client({ connectionString: sandbox.url });
    await admin.connect();
    try {
      const cut = await admin.query(`SELECT pg_terminate_backend(active_pid) AS cut FROM pg_replication_slots WHERE slot_name = $1 AND active`, [sandbox.slotName]);
      expect(cut.rows[0]?.cut).toBe(true);
    } finally {
      await admin.end();
    }
    const after = await writeAll(app, COMMITS);
    await waitFor('the second half published after the reconnect', () => after.every((id) => recording.published.some((m) => m.envelope.id === id)), 20_000);
    for (let a = 0; a < AGGREGATES; a++) {
      const order = recording.published.filter((m) => m.key === `L${a}`).map(seq);
      const firstSeen = order.filter((value, index) => order.indexOf(value) === index);
      expect(firstSeen).toEqual([...firstSeen].sort((x, y) => x - y));
    }
  });
});
