import { OutboxWriteError } from './outbox.errors';
import { OutboxMessageFactory, type MessageDraft } from './outbox-message.factory';

const draft: MessageDraft = { type: 'orders.order-placed', version: 1, aggregateType: 'order', aggregateId: 'o-1', payload: { total: 5 } };

describe('OutboxMessageFactory', () => {
  const ids = () => '01900000-0000-7000-8000-000000000000';

  it('picks the destination: explicit, then resolveTopic, then aggregate, then default', () => {
    const factory = new OutboxMessageFactory({ defaultTopic: 'fallback', resolveTopic: (d) => (d.type.endsWith('paid') ? 'payments' : undefined) }, ids);
    expect(factory.create({ ...draft, topic: 'explicit', aggregateTopic: 'orders' })[0].destination).toBe('explicit');
    expect(factory.create({ ...draft, type: 'orders.order-paid', aggregateTopic: 'orders' })[0].destination).toBe('payments');
    expect(factory.create({ ...draft, aggregateTopic: 'orders' })[0].destination).toBe('orders');
    expect(factory.create(draft)[0]).toMatchObject({ transport: 'default', destination: 'fallback' });
  });

  it('fails naming the event when no destination is known, and points at add\'s own topic first', () => {
    expect(() => new OutboxMessageFactory({}, ids).create(draft)).toThrow(/"orders.order-placed"/);
    expect(() => new OutboxMessageFactory({}, ids).create(draft)).toThrow(/OutboxPublisher\.add\(tx, \{ \.\.\., topic: 'orders' \}\) for this event/);
  });

  it.each([
    ['given to add', { topic: '  ' }, {}],
    ['returned by resolveTopic', {}, { resolveTopic: () => 'orders\nplaced' }],
  ])('refuses a destination no broker takes, %s, before anything is written', (_, overrides, settings) => {
    const create = () => new OutboxMessageFactory(settings, ids).create({ ...draft, ...overrides });
    expect(create).toThrow(OutboxWriteError);
    expect(create).toThrow(/Event "orders.order-placed" of aggregate "order" names the destination .*which no broker takes/);
  });

  it.each([
    ['a BigInt', { amount: 10n }],
    ['a circular reference', (() => { const a: Record<string, unknown> = {}; a.self = a; return a; })()],
  ])('rejects a payload with %s, naming the event type', (_, payload) => {
    const factory = new OutboxMessageFactory({ defaultTopic: 't' }, ids);
    expect(() => factory.create({ ...draft, payload })).toThrow(OutboxWriteError);
    expect(() => factory.create({ ...draft, payload })).toThrow(/Event "orders.order-placed"/);
  });

  it('merges enrich() under explicit metadata', () => {
    const factory = new OutboxMessageFactory(
      { defaultTopic: 't', enrich: () => ({ correlationId: 'from-hook', tenantId: 'acme', headers: { traceparent: 'tp', a: 'hook' } }) },
      ids,
    );
    const [message] = factory.create({ ...draft, metadata: { correlationId: 'explicit', headers: { a: 'explicit' } } });
    expect(message).toMatchObject({ correlationId: 'explicit', tenantId: 'acme', headers: { traceparent: 'tp', a: 'explicit' } });
    expect(JSON.parse(message.payloadJson)).toEqual({ total: 5 });
  });

  it('writes one row per destination: the primary one and every matching route', () => {
    const factory = new OutboxMessageFactory(
      {
        routes: [
          { events: ['orders.order-placed'], transport: 'partner', topic: 'partner.orders' },
          { aggregates: ['invoice'], transport: 'billing', topic: 'invoices' },
          { transport: 'audit', topic: 'audit-log' },
        ],
      },
      (() => {
        let n = 0;
        return () => `id-${++n}`;
      })(),
    );
    const rows = factory.create({ ...draft, aggregateTopic: 'orders' });
    expect(rows.map((row) => [row.transport, row.destination])).toEqual([
      ['default', 'orders'],
      ['partner', 'partner.orders'],
      ['audit', 'audit-log'],
    ]);
    expect(new Set(rows.map((row) => row.id)).size).toBe(3);
    expect(new Set(rows.map((row) => row.payloadJson)).size).toBe(1);
  });

  it('rejects a payload over maxPayloadBytes, naming the event type and the limit', () => {
    const factory = new OutboxMessageFactory({ defaultTopic: 't', maxPayloadBytes: 100 }, ids);
    expect(() => factory.create({ ...draft, payload: { blob: 'x'.repeat(200) } })).toThrow(/"orders.order-placed".* over the limit of 100 bytes \(option "maxPayloadBytes"\)/);
    expect(factory.create({ ...draft, payload: { blob: 'x'.repeat(50) } })).toHaveLength(1);
  });

  it('rejects a header that is not a string', () => {
    const factory = new OutboxMessageFactory({ defaultTopic: 't', enrich: () => ({ headers: { retries: 3 as never } }) }, ids);
    expect(() => factory.create(draft)).toThrow(/header "retries"/);
  });

  it('gives every message a time-ordered UUIDv7 by default', () => {
    const factory = new OutboxMessageFactory({ defaultTopic: 't' });
    const [a, b] = [factory.create(draft)[0].id, factory.create(draft)[0].id];
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a < b).toBe(true);
  });
});

describe('OutboxMessageFactory limits', () => {
  const factory = new OutboxMessageFactory({ defaultTopic: 'orders' });
  const draft = { type: 'orders.placed', version: 1, aggregateType: 'order', aggregateId: 'o-1', payload: {} };

  it.each([
    [{ correlationId: 'c'.repeat(256) }, 'correlationId is 256 characters long, over the limit of 255'],
    [{ tenantId: 't'.repeat(300) }, 'tenantId is 300 characters long'],
    [{ headers: { traceparent: 'x'.repeat(9_000) } }, 'header "traceparent" is 9000 characters long, over the limit of 8192'],
    [{ headers: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`h${i}`, 'v'])) }, 'it carries 65 headers, over the limit of 64'],
  ])('refuses metadata %#, naming the field', (metadata, message) => {
    expect(() => factory.create({ ...draft, metadata })).toThrow(OutboxWriteError);
    expect(() => factory.create({ ...draft, metadata })).toThrow(message);
  });

  it('refuses an aggregate id longer than its column', () => {
    expect(() => factory.create({ ...draft, aggregateId: 'a'.repeat(256) })).toThrow('the aggregate id is 256 characters long');
  });
});
