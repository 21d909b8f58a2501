import { OutboxAdmin, OutboxRelayHost } from '@nest-outbox/outbox';
import { createSqlOutboxStatsSource } from '@nest-outbox/outbox/typeorm';
import type { OutboxPartitioning } from '@nest-outbox/outbox/core';
import { OutboxStats } from '@nest-outbox/outbox/observability';
import { createOutboxHarness, type DeliveryMode, type OutboxHarness, type TestDatabase } from './support/outbox-harness';
import { RecordingTransport } from './support/recording.transport';
import { waitFor } from './support/wait-for';

/**
 * The stats statement on one real database: every count, the lag and the module's injectable. In
 * the WAL mode (PostgreSQL) the rows are those the stream moved to the table: every case applies.
 */
const TEN_MINUTES_AGO: Record<TestDatabase, string> = {
  postgres: `now() - interval '10 minutes'`,
  sqlite: `strftime('%Y-%m-%d %H:%M:%f', 'now', '-600 seconds')`,
  mariadb: 'NOW(3) - INTERVAL 10 MINUTE',
};

export function describeOutboxStats(database: TestDatabase, mode: DeliveryMode = 'table', partitioning?: OutboxPartitioning): void {
  describe(`stats on ${database}${mode === 'wal' ? ' in the WAL mode' : ''}${partitioning ? `, table partitioned by ${partitioning.interval}` : ''}`, () => {
    let harness: OutboxHarness;

    beforeEach(async () => {
      harness = await createOutboxHarness(database, { delivery: mode, relay: false, stats: { refreshIntervalMs: 60_000 }, ...(partitioning ? { partitioning } : {}) });
    });

    afterEach(async () => {
      await harness?.close();
    });

    const event = (n: number, topic: string) => ({ type: 'stats.tested', aggregateType: 'stat', aggregateId: `S-${n}`, payload: { n }, topic });

    it('counts pending, retrying, dead and published rows per destination, and the oldest pending row’s age', async () => {
      await harness.add([event(1, 'stats-a'), event(2, 'stats-a'), event(3, 'stats-a'), event(4, 'stats-b'), event(5, 'stats-b')]);
      const rows = await harness.rows();
      const transport = new RecordingTransport();
      transport.failTimes(rows[1].id, 1);
      transport.failTimes(rows[3].id, 1);
      // One attempt each: the two failing rows (one per destination) die, the three others are published.
      const relay = harness.relay('stats-relay', transport, { maxAttempts: 1 });
      await relay.publishBatch();

      const counts = await createSqlOutboxStatsSource(harness.dataSource, 'outbox_messages').readCounts();
      expect(counts).toHaveLength(2);
      const byDestination = Object.fromEntries(counts.map((row) => [row.destination, row]));
      expect(byDestination['stats-a']).toMatchObject({ transport: 'default', pending: 0, dead: 1, publishedLastMinute: 2, publishedLastHour: 2 });
      expect(byDestination['stats-b']).toMatchObject({ pending: 0, dead: 1, publishedLastMinute: 1, publishedLastHour: 1 });
      expect(byDestination['stats-a'].lastPublishedAgoMs).toBeGreaterThanOrEqual(0);
      expect(byDestination['stats-a'].lastPublishedAgoMs).toBeLessThan(60_000);
      expect(byDestination['stats-a'].oldestPendingAgeMs).toBeNull();
    });

    it('keeps the hour’s published count across reads that only count the last minutes again, without counting a row twice', async () => {
      const transport = new RecordingTransport();
      const relay = harness.relay('stats-relay', transport);
      const source = createSqlOutboxStatsSource(harness.dataSource, 'outbox_messages');
      await harness.add([event(1, 'hourly'), event(2, 'hourly')]);
      await relay.publishBatch();
      expect(await source.readCounts()).toEqual([expect.objectContaining({ destination: 'hourly', publishedLastHour: 2, publishedLastMinute: 2 })]);

      await harness.add([event(3, 'hourly')]);
      await relay.publishBatch();
      expect(await source.readCounts()).toEqual([expect.objectContaining({ publishedLastHour: 3, publishedLastMinute: 3 })]);
      const [again] = await source.readCounts();
      expect(again).toMatchObject({ publishedLastHour: 3, publishedLastMinute: 3, pending: 0 });
      expect(again.lastPublishedAgoMs).toBeLessThan(60_000);
    });

    it('sees rows waiting for a retry, and the lag of the oldest pending row growing', async () => {
      await harness.add([event(1, 'lagging'), event(2, 'lagging')]);
      const [first] = await harness.rows();
      const transport = new RecordingTransport();
      transport.failTimes(first.id, 1_000);
      const relay = harness.relay('stats-relay', transport, { maxAttempts: 100 });
      await relay.publishBatch();
      const stats = harness.module.get(OutboxStats);

      const before = await stats.snapshot({ fresh: true });
      expect(before.destinations).toEqual([expect.objectContaining({ destination: 'lagging', pending: 1, retrying: 1, inFlight: 0, dead: 0 })]);
      expect(before).toMatchObject({ pending: 1, retrying: 1, dead: 0, publishedLastMinute: 1 });
      expect(before.oldestPendingAgeMs).toEqual(expect.any(Number));

      const later = await waitFor('the lag to grow', async () => {
        const snapshot = await stats.snapshot({ fresh: true });
        return snapshot.oldestPendingAgeMs! > before.oldestPendingAgeMs! + 50 ? snapshot : undefined;
      });
      expect(later.pending).toBe(1);
      // Cached: the next read within the refresh interval returns the same reading.
      expect((await harness.module.get(OutboxRelayHost).stats()).readAt).toEqual(later.readAt);
    });

    it('counts the lag from when a row became due: a dead row requeued long after it was written, a delayed row not yet due', async () => {
      // The WAL mode writes delayed rows as the table mode does; its harness moves rows in as the stream would, undelayed.
      const delayed = mode === 'table' ? [{ ...event(2, 'due'), delayMs: 3_600_000 }] : [];
      await harness.add([event(1, 'due'), ...delayed]);
      const [old] = await harness.rows();
      const failing = new RecordingTransport();
      failing.failTimes(old.id, 2);
      await harness.relay('stats-relay', failing, { maxAttempts: 1 }).publishBatch();
      await harness.dataSource.query(`UPDATE outbox_messages SET created_at = ${TEN_MINUTES_AGO[database]} WHERE id = ${database === 'postgres' ? '$1' : '?'}`, [old.id]);
      const stats = harness.module.get(OutboxStats);
      // Before the requeue: dead, and the delayed row is neither late, so nothing lags, nor retrying: it never failed.
      expect(await stats.snapshot({ fresh: true })).toMatchObject({ dead: 1, pending: delayed.length, retrying: 0, oldestPendingAgeMs: null });

      await harness.module.get(OutboxAdmin).requeue(old.id);
      const requeued = await stats.snapshot({ fresh: true });
      expect(requeued).toMatchObject({ dead: 0, pending: 1 + delayed.length });
      expect(requeued.oldestPendingAgeMs).toEqual(expect.any(Number));
      expect(requeued.oldestPendingAgeMs!).toBeLessThan(60_000);

      // Once it has failed again, the row is late since it was written: the lag grows through an outage.
      await harness.relay('stats-relay', failing, { maxAttempts: 5 }).publishBatch();
      expect((await stats.snapshot({ fresh: true })).oldestPendingAgeMs!).toBeGreaterThan(590_000);
    });

    it('counts rows under a live lease as in flight', async () => {
      await harness.add([event(1, 'held')]);
      let acknowledge!: () => void;
      const acknowledged = new Promise<void>((resolve) => (acknowledge = resolve));
      const relay = harness.relay('stats-relay', { name: 'slow', publish: () => acknowledged }, { publishTimeoutMs: 20_000, leaseMs: 30_000 });
      const publishing = relay.publishBatch();
      const stats = harness.module.get(OutboxStats);
      await waitFor('the row to be in flight', async () => (await stats.snapshot({ fresh: true })).inFlight === 1);
      acknowledge();
      await publishing;
      expect(await stats.snapshot({ fresh: true })).toMatchObject({ inFlight: 0, pending: 0, publishedLastMinute: 1 });
    });
  });
}
