import 'reflect-metadata';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { OutboxAggregateRoot } from '../core/recorded-events';
import { OutboxEvent } from './outbox-event.decorator';
import { PublishesEvents } from './publishes-events.decorator';

describe('decorator options are checked where the class is declared', () => {
  it.each(['', '   ', 'orders\u0000', 'orders\nbilling', 42])('@PublishesEvents refuses the topic %j', (topic) => {
    const decorate = () => PublishesEvents({ topic: topic as string })(class Order extends OutboxAggregateRoot {});
    expect(decorate).toThrow(OutboxConfigurationError);
    expect(decorate).toThrow(/@PublishesEvents\(\) on Order: option "topic" must be a non-empty string without control characters/);
  });

  it.each(['', ' ', 'a\u0007b'])('@OutboxEvent refuses the topic %j', (topic) => {
    const decorate = () => OutboxEvent('orders.order-placed', { topic })(class OrderPlaced {});
    expect(decorate).toThrow(/@OutboxEvent\(\) on OrderPlaced: option "topic" must be a non-empty string without control characters/);
  });

  it('takes an ordinary topic', () => {
    expect(() => PublishesEvents({ topic: 'orders.v1' })(class Order extends OutboxAggregateRoot {})).not.toThrow();
    expect(() => OutboxEvent('orders.order-placed', { topic: 'orders-placed' })(class OrderPlaced {})).not.toThrow();
  });

  it.each([{}, { avro: {}, jsonSchema: {} }, { protobuf: {} }, { avro: 7 }])('@OutboxEvent refuses the schema %j', (schema) => {
    const decorate = () => OutboxEvent('orders.order-placed', { schema: schema as never })(class OrderPlaced {});
    expect(decorate).toThrow(/@OutboxEvent\(\) on OrderPlaced: option "schema" must be exactly one of \{ avro/);
  });
});
