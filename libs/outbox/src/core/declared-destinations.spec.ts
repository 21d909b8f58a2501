import 'reflect-metadata';
import { declaredDestinations } from './declared-destinations';
import { declareOutboxEvent, declarePublishesEvents } from './event-metadata';

// The declarations are process-wide, as the decorators make them: names unique to this file.
class WarmUpParcel {}
class WarmUpInvoice {}
class WarmUpParcelShipped {}
class WarmUpInvoiceRaised {}
declarePublishesEvents(WarmUpParcel, { aggregateType: 'warm-up-parcel', topic: 'warm-up.parcels' });
declarePublishesEvents(WarmUpInvoice, { aggregateType: 'warm-up-invoice' });
declareOutboxEvent(WarmUpParcelShipped, { type: 'warm-up.parcel-shipped', version: 1 });
declareOutboxEvent(WarmUpInvoiceRaised, { type: 'warm-up.invoice-raised', version: 1, topic: 'warm-up.invoices' });

describe('declaredDestinations', () => {
  it("gathers defaultTopic, the aggregates' and events' topics, resolveTopic's answers for declared types and the routes, by transport, each once", () => {
    const destinations = declaredDestinations({
      defaultTopic: 'warm-up.default',
      resolveTopic: (draft) => (draft.type === 'warm-up.parcel-shipped' ? 'warm-up.shipping' : undefined),
      routes: [
        { transport: 'audit', topic: 'warm-up.audit' },
        { transport: 'audit', events: ['warm-up.invoice-raised'], topic: 'warm-up.audit' },
      ],
    });
    expect(destinations.get('default')).toEqual(expect.arrayContaining(['warm-up.default', 'warm-up.parcels', 'warm-up.invoices', 'warm-up.shipping']));
    expect(new Set(destinations.get('default')).size).toBe(destinations.get('default')!.length);
    expect(destinations.get('audit')).toEqual(['warm-up.audit']);
  });

  it('asks resolveTopic only with declared event types: a hook built on the type names no made-up topic', () => {
    const asked: string[] = [];
    const destinations = declaredDestinations({
      routes: [],
      resolveTopic: (draft) => {
        asked.push(draft.type);
        return `warm-up.by-type.${draft.type}`;
      },
    });
    expect(asked).not.toContain('');
    expect(destinations.get('default')).not.toContain('warm-up.by-type.');
    expect(destinations.get('default')).toContain('warm-up.by-type.warm-up.parcel-shipped');
  });
});
