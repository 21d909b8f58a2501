import { OneMessageRefused } from '../support/one-message-refused.transport';
import { createOutboxHarness, type OutboxHarness } from '../support/outbox-harness';
import { waitFor } from '../support/wait-for';

describe('SQLite: the reason of a row that goes dead after a restart with a lower maxAttempts', () => {
  let harness: OutboxHarness;
  beforeAll(async () => {
    harness = await createOutboxHarness('sqlite');
  });
  afterAll(() => harness?.close());

  it('says it failed 7 times with errors recorded, not that it was claimed without an outcome', async () => {
    const transport = new OneMessageRefused('flaky');
    transport.mode = 'retry';
    await harness.add([{ type: 'parcel.noted', aggregateType: 'parcel', aggregateId: 'p1', payload: { label: 'flaky' }, topic: 'parcels' }]);
    // A relay with maxAttempts 10 fails it 7 times (each failure recorded, then backoff of 50 to 200 ms).
    const before = harness.relay('before-restart', transport, { maxAttempts: 10 });
    await waitFor('7 recorded failures', async () => {
      await before.publishBatch();
      const [row] = await harness.rows();
      return row.attempts >= 7 && row;
    });
    // The restart: this relay stops (it would otherwise retry the row by itself when its backoff ends).
    await before.stop(1_000);
    const [failing] = await harness.rows();
    expect({ status: failing.status, attempts: failing.attempts }).toEqual({ status: 'pending', attempts: 7 });
    // The app comes back with maxAttempts 5: its first claim of the row is attempt 8.
    const after = harness.relay('after-restart', transport, { maxAttempts: 5 });
    await waitFor('the row to go dead', async () => (await after.publishBatch()).dead === 1, 5_000);
    const [dead] = await harness.rows();
    expect({ status: dead.status, attempts: dead.attempts }).toEqual({ status: 'dead', attempts: 8 });
    expect(dead.lastError).toBe(
      'Outbox row 1 failed 7 time(s) with the error recorded (the last: "flaky not yet"); this claim would be attempt 8, over "maxAttempts" (5), ' +
        'which is lower than when those failures were recorded. It is dead-lettered without another attempt; fix the cause in its error history, then requeue it (fresh attempts) or discard it.',
    );
    expect(transport.published).toEqual([]);
  });
});
