import type { FactoryProvider } from '@nestjs/common';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { resolveDeliveryPlan } from '../delivery/delivery-modes';
import { outboxStreamProvider } from './outbox-stream.provider';

describe('outboxStreamProvider: the delivery plan decides whether there is a stream', () => {
  const make = (outboxStreamProvider as FactoryProvider).useFactory;
  const table = { tableName: 'outbox_messages' };
  const settings = { delivery: 'wal' as const, relay: true, wal: { slotName: 'orders_stream' } };
  const connection = (dialect: string) => ({ dialect, layer: 'pg' });
  const observability = { stats: { refreshIntervalMs: 5_000 } };
  const build = (delivery: 'table' | 'wal', dialect: string, dataSource: unknown = null) =>
    make(resolveDeliveryPlan({ ...settings, delivery }, table), settings, {}, table, connection(dialect), dataSource, observability, {}, {}, {});

  it('makes nothing in the table mode, whatever the database', () => {
    expect(build('table', 'postgres')).toBeNull();
    expect(build('table', 'sqlite')).toBeNull();
  });

  it("makes the WAL mode's stream on PostgreSQL, on the plan's slot", () => {
    const stream = build('wal', 'postgres');
    expect(stream).not.toBeNull();
    expect(stream.source).toEqual({ name: 'orders_stream' });
  });

  it('refuses the WAL mode on another database when the module is made, naming the database', () => {
    expect(() => build('wal', 'sqlite', { options: { type: 'better-sqlite3' } })).toThrow(OutboxConfigurationError);
    expect(() => build('wal', 'sqlite', { options: { type: 'better-sqlite3' } })).toThrow(/better-sqlite3/);
  });
});
