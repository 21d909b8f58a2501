import { DeliveryBatch } from './delivery-batch';

describe('DeliveryBatch', () => {
  it('resolves once every message has its outcome, in the order of the messages whatever the order of the reports', async () => {
    const batch = new DeliveryBatch(3);
    let done = false;
    void batch.outcomes.then(() => (done = true));
    const refused = new Error('refused');
    batch.settle(2);
    batch.settle(0, refused);
    await Promise.resolve();
    expect(done).toBe(false);
    batch.settle(1);
    expect(await batch.outcomes).toEqual([refused, undefined, undefined]);
  });

  it('settles a message once: a late report after close changes nothing', async () => {
    const batch = new DeliveryBatch(2);
    batch.settle(0);
    const closed = new Error('closed');
    batch.failUnsettled(closed);
    batch.settle(1);
    expect(await batch.outcomes).toEqual([undefined, closed]);
  });

  it('fails the messages never handed over, from the one librdkafka refused on', async () => {
    const batch = new DeliveryBatch(4);
    batch.settle(0);
    const queueFull = new Error('queue full');
    batch.failFrom(1, queueFull);
    expect(await batch.outcomes).toEqual([undefined, queueFull, queueFull, queueFull]);
  });

  it('resolves an empty batch at once', async () => {
    expect(await new DeliveryBatch(0).outcomes).toEqual([]);
  });
});
