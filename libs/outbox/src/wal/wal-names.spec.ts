import { walMessagePrefix, walNames } from './wal-names';

describe('walNames', () => {
  it('name the slot after the table and its schema', () => {
    expect(walNames({ tableName: 'outbox_messages' })).toEqual({ slotName: 'outbox_outbox_messages', publicationName: 'outbox_outbox_messages' });
    expect(walNames({ tableName: 'Events', schema: 'Billing' }, { publicationName: 'pub' })).toEqual({ slotName: 'outbox_billing_events', publicationName: 'pub' });
  });

  it("put a named outbox's name in the slot, and the slot's name in the messages' prefix", () => {
    expect(walNames({ tableName: 'outbox_messages', name: 'billing' }).slotName).toBe('outbox_billing_outbox_messages');
    expect(walMessagePrefix('orders_slot')).toBe('nest-outbox:orders_slot');
  });
});
