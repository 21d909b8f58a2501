import { RoundTurns } from './round-turns';

describe('RoundTurns', () => {
  it('runs at most `limit` rounds at once and hands turns out in the order they were asked for', async () => {
    const turns = new RoundTurns(2);
    const order: string[] = [];
    const first = await turns.take();
    const second = await turns.take();
    const waiting = ['a', 'b', 'c'].map((name) => turns.take().then((give) => (order.push(name), give)));
    await Promise.resolve();
    expect(turns.load).toEqual({ running: 2, waiting: 3 });
    expect(order).toEqual([]);
    first();
    first(); // a turn given back twice counts once
    const a = await waiting[0];
    expect(order).toEqual(['a']);
    expect(turns.load).toEqual({ running: 2, waiting: 2 });
    second();
    a();
    await Promise.all(waiting.slice(1));
    expect(order).toEqual(['a', 'b', 'c']);
  });

  it('refuses a limit that is not a positive integer', () => {
    expect(() => new RoundTurns(0)).toThrow('limit must be a positive integer');
  });
});
