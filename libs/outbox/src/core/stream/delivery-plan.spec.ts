import { resolveDeliveryPlan } from './delivery-plan';

describe('resolveDeliveryPlan', () => {
  it("in the WAL mode: the slot and publication, the prefix that names the slot, and rows by default", () => {
    expect(resolveDeliveryPlan({ delivery: 'wal', wal: { slotName: 'orders_slot' } }, { tableName: 'outbox_messages' })).toEqual({
      mode: 'wal',
      slot: { slotName: 'orders_slot', publicationName: 'orders_slot' },
      prefix: expect.stringContaining('orders_slot'),
      write: 'row',
    });
    expect(resolveDeliveryPlan({ delivery: 'wal', wal: { write: 'message' } }, { tableName: 'outbox_messages' })).toMatchObject({ write: 'message' });
  });

  it('in the table mode: the slot an earlier WAL-mode run would have left, for the check at start', () => {
    expect(resolveDeliveryPlan({ delivery: 'table' }, { tableName: 'outbox_messages', schema: 'billing' })).toEqual({
      mode: 'table',
      formerSlot: { slotName: 'outbox_billing_outbox_messages', publicationName: 'outbox_billing_outbox_messages' },
    });
  });
});
