import type { OutboxTransport } from '@nest-outbox/outbox';
import type { OutgoingMessage } from '@nest-outbox/outbox/core';
import { waitFor } from '../support/wait-for';
import { walSandbox, type WalApp, type WalSandbox } from '../support/wal.harness';

/** Refuses every message of one aggregate while `broken`; acknowledges the rest. */
class BrokenForOneKey implements OutboxTransport {
  readonly name = 'broken-for-one-key';
  readonly published: OutgoingMessage[] = [];
  broken = true;
  constructor(private readonly key: string) {}
  async publish(message: OutgoingMessage): Promise<void> {
    if (this.broken && message.key === this.key) throw new Error(`partition of ${this.key} unavailable`);
    this.published.push(message);
  }
  labels(key: string): string[] {
    return this.published.filter((m) => m.key === key).map((m) => (m.envelope.payload as { label: string }).label);
  }
}

describe('WAL delivery mode: a failing aggregate moves to the table and never blocks the others', () => {
  let sandbox: WalSandbox;
  let app: WalApp;
  const transport = new BrokenForOneKey('stuck');
  const write = (aggregateId: string, label: string) =>
    app.dataSource.transaction((manager) => app.publisher.add(manager, { type: 'parcel.noted', aggregateType: 'parcel', aggregateId, payload: { label }, topic: 'parcels' }));
  const rows = (aggregateId: string) =>
    app.dataSource.query(`SELECT payload::jsonb->>'label' AS label, status, attempts, last_error AS "lastError" FROM outbox_messages WHERE aggregate_id = $1 ORDER BY position`, [aggregateId]);

  beforeAll(async () => {
    sandbox = await walSandbox('wal_overflow');
    app = await sandbox.start({
      transport,
      batchSize: 10,
      pollIntervalMs: 100,
      maxAttempts: 100,
      backoff: { initialMs: 20, maxMs: 50, jitter: 0 },
      wal: { slotName: sandbox.slotName, attemptsBeforeTable: 2 },
    });
  });
  afterAll(() => sandbox?.drop());

  it('streams other aggregates past it, publishes its messages in order from the table, then streams it directly again', async () => {
    await write('stuck', 's1');
    await write('fine-1', 'f1');
    await write('stuck', 's2');
    await write('fine-2', 'f2');
    await waitFor('the other aggregates published while "stuck" fails', () => transport.labels('fine-1').length === 1 && transport.labels('fine-2').length === 1);
    const held = await waitFor('both messages of "stuck" moved to the table', async () => {
      const found = await rows('stuck');
      return found.length === 2 ? found : undefined;
    });
    expect(held[0]).toMatchObject({ label: 's1', status: 'pending' });
    expect(held[0].attempts).toBeGreaterThanOrEqual(2);
    expect(held[0].lastError).toContain('partition of stuck unavailable');
    expect(held[1]).toMatchObject({ label: 's2', status: 'pending' });
    expect(transport.labels('stuck')).toEqual([]);

    transport.broken = false;
    await waitFor('the table relay publishing "stuck" in order', () => transport.labels('stuck').length === 2);
    expect(transport.labels('stuck')).toEqual(['s1', 's2']);
    await waitFor('the table rows of "stuck" published', async () => (await rows('stuck')).every((row: { status: string }) => row.status === 'published'));

    await write('stuck', 's3');
    await waitFor('the next message of "stuck" streamed', () => transport.labels('stuck').length === 3);
    expect(transport.labels('stuck')).toEqual(['s1', 's2', 's3']);
    // s3 streamed leaves no row (wal.write 'row': the stream deletes its row once acknowledged): s1 and s2 stay, published.
    await waitFor('only the rows the table relay published left', async () => (await rows('stuck')).length === 2);
  });
});
