import { OutboxCleaner } from '../outbox-cleaner';
import type { OutboxMaintenanceStore } from '../outbox-maintenance.port';
import type { OutboxPartitionStore } from './outbox-partitions.port';

describe('OutboxCleaner on a partitioned table', () => {
  const rows = (): OutboxMaintenanceStore => ({
    listDead: async () => [],
    requeue: async () => 'missing',
    discard: async () => 'missing',
    deletePublished: jest.fn(async () => 0),
    deleteDead: async () => 0,
  });
  const settings = { publishedRetentionMs: 1_000, deadRetentionMs: null, batchSize: 10, maxBatchesPerRun: 2 };

  it('makes partitions ahead, then drops expired ones, then deletes the rows left to it; and reports what it did', async () => {
    const calls: string[] = [];
    const partitions: OutboxPartitionStore = {
      tableKind: async () => 'partitioned',
      makeAhead: async () => (calls.push('makeAhead'), { made: ['t_p20261127'], failed: [] }),
      dropExpired: async (retention) => (calls.push(`dropExpired ${retention}`), { dropped: ['t_p20261101'], kept: ['t_p20261102'], failed: [] }),
    };
    const store = rows();
    (store.deletePublished as jest.Mock).mockImplementation(async () => (calls.push('deletePublished'), 3));
    const outcome = await new OutboxCleaner(store, settings, { log: jest.fn(), warn: jest.fn(), error: jest.fn() }, partitions).run();
    expect(calls).toEqual(['makeAhead', 'dropExpired 1000', 'deletePublished']);
    expect(outcome).toEqual({ published: 3, dead: 0, partitions: { made: ['t_p20261127'], dropped: ['t_p20261101'], kept: ['t_p20261102'] } });
  });

  it('warns once per partition it could not make, and on every drop that failed', async () => {
    const partitions: OutboxPartitionStore = {
      tableKind: async () => 'partitioned',
      makeAhead: async () => ({ made: [], failed: [{ partition: 't_p20261126', error: 'updated partition constraint for default partition would be violated' }] }),
      dropExpired: async () => ({ dropped: [], kept: [], failed: [{ partition: 't_p20261101', error: 'canceling statement due to lock timeout' }] }),
    };
    const warn = jest.fn();
    const cleaner = new OutboxCleaner(rows(), settings, { log: jest.fn(), warn, error: jest.fn() }, partitions);
    await cleaner.run();
    await cleaner.run();
    const texts = warn.mock.calls.map(([text]) => String(text));
    expect(texts.filter((text) => text.includes('t_p20261126 could not be made ahead'))).toHaveLength(1);
    expect(texts.filter((text) => text.includes('t_p20261101 could not be dropped'))).toHaveLength(2);
    expect(texts[0]).toMatch(/rows meanwhile land in the DEFAULT partition, none is lost/);
  });
});
