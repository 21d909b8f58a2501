import type { SqlConnection } from '../core/sql-connection.port';
import type { StreamDependencies } from '../core/stream/delivery-plan';
import { resolveDeliveryPlan } from './delivery-modes';

describe('resolveDeliveryPlan', () => {
  const table = { tableName: 'outbox_messages' };

  it('in the WAL mode: the prefix that names the slot, rows by default, and a stream of that slot', () => {
    const plan = resolveDeliveryPlan({ delivery: 'wal', wal: { slotName: 'orders_slot' } }, table);
    expect(plan).toMatchObject({ mode: 'wal', prefix: 'nest-outbox:orders_slot', write: 'row' });
    expect(resolveDeliveryPlan({ delivery: 'wal', wal: { write: 'message' } }, table)).toMatchObject({ write: 'message' });
    if (plan.mode !== 'wal') throw new Error('expected the WAL plan');
    const stream = plan.createStream({ settings: { relay: true, wal: {} }, table, lagReadingMs: 5_000 } as unknown as StreamDependencies);
    expect(stream.source).toEqual({ name: 'orders_slot' });
  });

  it("in the table mode: one check of what the WAL mode left, which reads nothing but PostgreSQL", async () => {
    const plan = resolveDeliveryPlan({ delivery: 'table' }, { tableName: 'outbox_messages', schema: 'billing' });
    if (plan.mode !== 'table') throw new Error('expected the table plan');
    expect(plan.leftBehind).toHaveLength(1);
    const run = jest.fn();
    await plan.leftBehind[0]({ dialect: 'sqlite', run } as unknown as SqlConnection, { log: jest.fn(), warn: jest.fn(), error: jest.fn() });
    expect(run).not.toHaveBeenCalled();
  });

  it('refuses, in either mode, a table whose default slot name PostgreSQL would not take, naming the option', () => {
    expect(() => resolveDeliveryPlan({ delivery: 'table' }, { tableName: 'outbox-messages' })).toThrow('"wal.slotName"');
    expect(() => resolveDeliveryPlan({ delivery: 'wal' }, { tableName: 'outbox-messages' })).toThrow('"wal.slotName"');
  });
});
