import { OutboxWriteError } from '../../core/outbox.errors';
import { ConnectionTurns } from './connection-turns';

describe('ConnectionTurns', () => {
  it('hands the connection over in the order it was asked for, and keeps it with its holder until given back', async () => {
    const turns = new ConnectionTurns<string>(1_000);
    const entered: string[] = [];
    expect(turns.take('a')).toBeUndefined();
    expect(turns.take('a')).toBeUndefined();
    const waits = ['b', 'c'].map((holder) => turns.take(holder)!.then(() => entered.push(holder)));

    turns.give('c'); // not its turn: nothing moves
    await Promise.resolve();
    expect(entered).toEqual([]);
    turns.give('a');
    await waits[0];
    expect(turns.current).toBe('b');
    turns.give('b');
    await waits[1];
    expect(entered).toEqual(['b', 'c']);
    turns.give('c');
    expect(turns.current).toBeUndefined();
  });

  it('fails a wait that lasts longer than allowed, with the cause, and leaves the queue to the others', async () => {
    jest.useFakeTimers();
    try {
      const turns = new ConnectionTurns<string>(50);
      turns.take('a');
      const late = turns.take('b');
      jest.advanceTimersByTime(51);
      await expect(late).rejects.toThrow(OutboxWriteError);
      await expect(late).rejects.toThrow(/Waited 50 ms for SQLite's connection.*queryRunner\.manager/s);
      const next = turns.take('c');
      turns.give('a');
      await next;
      expect(turns.current).toBe('c');
    } finally {
      jest.useRealTimers();
    }
  });
});
