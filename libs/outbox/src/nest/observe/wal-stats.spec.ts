import { walStatsOf } from './wal-stats';

describe('walStatsOf', () => {
  const slot = { slotName: 'orders_outbox', publicationName: 'orders_outbox' };

  it('is undefined in the table mode, without reading anything', async () => {
    const slotLag = jest.fn();
    expect(await walStatsOf({ slot: undefined, slotLag })).toBeUndefined();
    expect(slotLag).not.toHaveBeenCalled();
  });

  it('carries the slot reading, and a missing slot as nothing retained and not streamed', async () => {
    expect(await walStatsOf({ slot, slotLag: async () => ({ retainedBytes: 4096, lagSeconds: 0.25, active: true }) })).toEqual({
      slot: 'orders_outbox',
      retainedBytes: 4096,
      lagSeconds: 0.25,
      active: true,
    });
    expect(await walStatsOf({ slot, slotLag: async () => undefined })).toEqual({ slot: 'orders_outbox', retainedBytes: null, lagSeconds: null, active: false });
  });
});
