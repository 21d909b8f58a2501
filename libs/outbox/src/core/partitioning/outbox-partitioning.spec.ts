import { outboxDdl } from '../../migrations/outbox-ddl';
import { resolveOutboxSettings } from '../outbox-options';
import { partitionsFrom, resolvePartitioning } from './outbox-partitioning';

describe('partitioning option', () => {
  it('defaults the partitions made ahead by interval', () => {
    expect(resolvePartitioning({ interval: 'day' })).toEqual({ interval: 'day', ahead: 3 });
    expect(resolvePartitioning({ interval: 'hour' })).toEqual({ interval: 'hour', ahead: 24 });
  });

  it.each([
    [{ interval: 'week' }, /"partitioning.interval": expected 'day' or 'hour', got "week"/],
    [{ interval: 'day', ahead: 0 }, /"partitioning.ahead": expected an integer from 1 to 366/],
    [{ interval: 'hour', ahead: 1.5 }, /"partitioning.ahead": expected an integer from 1 to 744/],
    [{ interval: 'day', ahed: 3 }, /"partitioning.ahed"/],
    ['day', /"partitioning": expected an object/],
  ])('refuses %j, naming the bad value', (value, message) => {
    expect(() => resolvePartitioning(value)).toThrow(message);
  });

  it('names partitions by their UTC start, the current one first', () => {
    const at = new Date('2026-11-26T23:30:00Z');
    expect(partitionsFrom(at, { interval: 'day', ahead: 1 }).map((p) => [p.suffix, p.from.toISOString(), p.to.toISOString()])).toEqual([
      ['p20261126', '2026-11-26T00:00:00.000Z', '2026-11-27T00:00:00.000Z'],
      ['p20261127', '2026-11-27T00:00:00.000Z', '2026-11-28T00:00:00.000Z'],
    ]);
    expect(partitionsFrom(at, { interval: 'hour', ahead: 1 }).map((p) => p.suffix)).toEqual(['p2026112623', 'p2026112700']);
  });

  it('is refused with the WAL delivery mode, whose table holds only the overflow', () => {
    expect(() => resolveOutboxSettings({ delivery: 'wal', partitioning: { interval: 'day' } }, () => 'r')).toThrow(/"partitioning" and "delivery"/);
    expect(resolveOutboxSettings({ partitioning: { interval: 'hour', ahead: 2 } }, () => 'r').partitioning).toEqual({ interval: 'hour', ahead: 2 });
  });

  it('makes the migration create a table partitioned by created_at on PostgreSQL, and is refused on MariaDB and SQLite', () => {
    const ddl = outboxDdl({ dialect: 'postgres', partitioning: { interval: 'day' } }).up.join('\n');
    expect(ddl).toContain('PARTITION BY RANGE (created_at)');
    expect(ddl).toContain('PRIMARY KEY (position, created_at)');
    expect(ddl).toContain('PARTITION OF "outbox_messages" DEFAULT');
    expect(() => outboxDdl({ dialect: 'mariadb', partitioning: { interval: 'day' } })).toThrow(/"partitioning" needs PostgreSQL.*mariadb/);
    expect(() => outboxDdl({ dialect: 'sqlite', partitioning: { interval: 'day' } })).toThrow(/"partitioning" needs PostgreSQL/);
    expect(() => outboxDdl({ dialect: 'postgres', tableName: 'a'.repeat(52), partitioning: { interval: 'day' } })).toThrow(/at most 51 characters/);
  });
});
