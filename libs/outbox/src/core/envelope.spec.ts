import { ENVELOPE_HEADERS, toOutgoingMessage } from './envelope';
import type { ClaimedMessage } from './outbox-message';

const claimed: ClaimedMessage = {
  position: '7',
  id: 'm-1',
  type: 'orders.order-placed',
  version: 2,
  aggregateType: 'order',
  aggregateId: 'o-1',
  transport: 'default',
  destination: 'orders',
  occurredAt: '2026-11-29T10:00:00.000Z',
  correlationId: 'c-1',
  headers: { 'x-request': 'r-1' },
  payloadJson: '{"total":3}',
  attempt: 1,
};

describe('toOutgoingMessage: the envelope in the body, and its fields as headers as envelope.headers says', () => {
  it("sends every field as an outbox-* header beside the message's own with 'all' (the default)", () => {
    const { headers, envelope } = toOutgoingMessage(claimed);
    expect(headers).toEqual({
      'x-request': 'r-1',
      [ENVELOPE_HEADERS.id]: 'm-1',
      [ENVELOPE_HEADERS.type]: 'orders.order-placed',
      [ENVELOPE_HEADERS.version]: '2',
      [ENVELOPE_HEADERS.aggregateType]: 'order',
      [ENVELOPE_HEADERS.aggregateId]: 'o-1',
      [ENVELOPE_HEADERS.occurredAt]: '2026-11-29T10:00:00.000Z',
      [ENVELOPE_HEADERS.correlationId]: 'c-1',
    });
    expect(envelope).toMatchObject({ id: 'm-1', correlationId: 'c-1', payload: { total: 3 } });
  });

  it("sends the id and the type only with 'id-and-type', and the message's own headers only with 'none'; the body keeps every field", () => {
    const idAndType = toOutgoingMessage(claimed, 'id-and-type');
    expect(idAndType.headers).toEqual({ 'x-request': 'r-1', [ENVELOPE_HEADERS.id]: 'm-1', [ENVELOPE_HEADERS.type]: 'orders.order-placed' });
    const none = toOutgoingMessage(claimed, 'none');
    expect(none.headers).toEqual({ 'x-request': 'r-1' });
    expect(none.envelope).toEqual(toOutgoingMessage(claimed).envelope);
    expect(none).toMatchObject({ destination: 'orders', key: 'o-1' });
  });
});
