import { streamStatsOf } from './stream-stats';

describe('streamStatsOf', () => {
  const source = { name: 'orders_outbox' };

  it('is undefined in the table mode (no stream), without reading anything', async () => {
    expect(await streamStatsOf(null)).toBeUndefined();
  });

  it("carries the slot's name and its lag", async () => {
    expect(await streamStatsOf({ source, lag: async () => ({ retainedBytes: 4096, lagSeconds: 0.25, active: true }) })).toEqual({
      slot: 'orders_outbox',
      retainedBytes: 4096,
      lagSeconds: 0.25,
      active: true,
    });
  });

  it('reads a missing slot as nothing retained and not streamed', async () => {
    expect(await streamStatsOf({ source, lag: async () => undefined })).toEqual({ slot: 'orders_outbox', retainedBytes: null, lagSeconds: null, active: false });
  });
});
