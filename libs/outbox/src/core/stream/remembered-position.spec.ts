import { RememberedPosition } from './remembered-position';
import type { StreamPositionStore } from './stream-position.port';

/** A store whose saves wait until released, to see what queues behind a write in flight. */
function gatedStore() {
  const saved: bigint[] = [];
  const gates: Array<() => void> = [];
  let failNext = false;
  const store: StreamPositionStore = {
    read: async () => saved.at(-1),
    save: (lsn) =>
      new Promise<void>((resolve, reject) =>
        gates.push(() => {
          if (failNext) return (failNext = false), reject(new Error('connection terminated'));
          saved.push(lsn);
          resolve();
        }),
      ),
  };
  return { store, saved, open: () => gates.shift()?.(), failNextSave: () => (failNext = true), pending: () => gates.length };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('RememberedPosition', () => {
  it('keeps one write in flight and collapses the positions remembered meanwhile into the newest', async () => {
    const gated = gatedStore();
    const warnings: string[] = [];
    const position = new RememberedPosition(gated.store, { warn: (text) => warnings.push(text) });
    position.remember(10n);
    position.remember(20n);
    position.remember(30n);
    position.remember(25n);
    await tick();
    expect(gated.pending()).toBe(1);
    gated.open();
    await tick();
    expect(gated.pending()).toBe(1);
    gated.open();
    await position.flushed();
    expect(gated.saved).toEqual([10n, 30n]);
    expect(await position.read()).toBe(30n);
    expect(warnings).toEqual([]);
  });

  it('says once that saving failed, and the next position is saved', async () => {
    const gated = gatedStore();
    const warnings: string[] = [];
    const position = new RememberedPosition(gated.store, { warn: (text) => warnings.push(text) });
    gated.failNextSave();
    position.remember(1n);
    await tick();
    gated.open();
    await tick();
    position.remember(2n);
    await tick();
    gated.open();
    await position.flushed();
    expect(gated.saved).toEqual([2n]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('0/1');
    expect(warnings[0]).toContain('connection terminated');
  });
});
