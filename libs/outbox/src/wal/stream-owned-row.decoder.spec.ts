import { STREAM_OWNER } from '../sql/dialects/stream-owned-rows.sql';
import { isStreamOwned, streamMessageOfRow } from './stream-owned-row.decoder';

// A decoded insert as pg-logical-replication hands it over: each column parsed by node-postgres' type parsers.
const row = {
  position: '42',
  id: '0b5d4a3e-9c1f-4a53-9d7e-3a1c2b4d5e6f',
  event_type: 'orders.order-placed',
  event_version: 2,
  aggregate_type: 'order',
  aggregate_id: 'o-1',
  transport: 'default',
  destination: 'orders',
  occurred_at: new Date('2026-11-29T06:00:00.000Z'),
  correlation_id: 'c-1',
  causation_id: null,
  tenant_id: null,
  headers: '{"traceparent":"00-abc-def-01"}',
  payload: '{"total":12}',
  status: 'pending',
  lease_owner: STREAM_OWNER,
};

describe('stream-owned rows as the stream decodes them', () => {
  it('tells the stream’s own rows from the table relay’s', () => {
    expect(isStreamOwned(row)).toBe(true);
    expect(isStreamOwned({ ...row, lease_owner: null })).toBe(false);
    expect(isStreamOwned(null)).toBe(false);
  });

  it('makes the message the row holds, with the row’s position', () => {
    expect(streamMessageOfRow(row, 3, 771)).toEqual({
      id: row.id,
      type: 'orders.order-placed',
      version: 2,
      aggregateType: 'order',
      aggregateId: 'o-1',
      transport: 'default',
      destination: 'orders',
      occurredAt: '2026-11-29T06:00:00.000Z',
      correlationId: 'c-1',
      causationId: undefined,
      tenantId: undefined,
      headers: { traceparent: '00-abc-def-01' },
      payloadJson: '{"total":12}',
      commit: 0n,
      index: 3,
      row: { position: '42', xid: 771 },
    });
  });
});
