import { forgetEvents, getRecordedEvents, OutboxAggregateRoot, recordEvent, WithOutboxEvents } from './recorded-events';

class Placed {
  constructor(readonly orderId: string) {}
}

describe('recorded events', () => {
  it('keeps events off the entity’s enumerable properties', () => {
    class Order extends OutboxAggregateRoot {
      id = 'o-1';
      place() {
        this.recordEvent(new Placed(this.id));
      }
    }
    const order = new Order();
    order.place();
    expect(getRecordedEvents(order)).toHaveLength(1);
    expect(Object.keys(order)).toEqual(['id']);
    expect(JSON.parse(JSON.stringify(order))).toEqual({ id: 'o-1' });
  });

  it('works as a mixin over an existing base class and on objects built without a constructor', () => {
    class Base {
      createdBy = 'system';
    }
    class Order extends WithOutboxEvents(Base) {}
    const order = new Order();
    order.recordEvent(new Placed('o-2'), { correlationId: 'c-1' });
    expect(order.createdBy).toBe('system');
    expect(getRecordedEvents(order)[0]).toMatchObject({ event: { orderId: 'o-2' }, metadata: { correlationId: 'c-1' } });

    const hydrated = Object.create(Order.prototype);
    expect(getRecordedEvents(hydrated)).toEqual([]);
    recordEvent(hydrated, new Placed('o-3'));
    expect(getRecordedEvents(hydrated)).toHaveLength(1);
  });

  it('records one event object once, however many times it is recorded', () => {
    const order = {};
    const placed = new Placed('a');
    recordEvent(order, placed, { correlationId: 'first' });
    recordEvent(order, placed, { correlationId: 'second' });
    recordEvent(order, new Placed('a'));
    expect(getRecordedEvents(order).map((recorded) => recorded.metadata?.correlationId)).toEqual(['first', undefined]);
  });

  it('forgets only the committed events', () => {
    const order = {};
    recordEvent(order, new Placed('a'));
    recordEvent(order, new Placed('b'));
    const [first] = getRecordedEvents(order);
    forgetEvents(order, new Set([first]));
    expect(getRecordedEvents(order).map((r) => (r.event as Placed).orderId)).toEqual(['b']);
  });
});
