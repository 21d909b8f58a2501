import { PausedDestinations } from './paused-destinations';
import type { StreamCommit, StreamMessage } from './stream-message';

const to = (destination: string, id: string) => ({ id, destination }) as StreamMessage;
const commitOf = (lsn: bigint, messages: StreamMessage[], paused?: string[]): StreamCommit => ({ lsn, messages, paused });

describe('PausedDestinations', () => {
  it('holds the messages of a commit that pauses their destination, and of every later commit, not those before', async () => {
    const paused = new PausedDestinations(async () => []);
    await paused.refresh();
    const before = to('billing', 'm1');
    const inThePause = to('billing', 'm2');
    const after = to('billing', 'm3');
    const other = to('shipping', 'm4');
    paused.accept(commitOf(1n, [before]));
    paused.accept(commitOf(2n, [inThePause], ['billing']));
    paused.accept(commitOf(3n, [after, other]));
    expect([before, inThePause, after, other].map((message) => paused.holds(message))).toEqual([false, true, true, false]);
  });

  it('learns of a resume by reading the table again, at most once a second while something is paused', async () => {
    let now = 0;
    let rows = ['billing'];
    let reads = 0;
    const paused = new PausedDestinations(async () => (reads++, rows), () => now);
    await paused.refresh();
    const held = to('billing', 'm1');
    paused.accept(commitOf(1n, [held]));
    rows = [];
    now = 999;
    await paused.refresh();
    expect(reads).toBe(1);
    now = 1_000;
    await paused.refresh();
    expect(reads).toBe(2);
    const released = to('billing', 'm2');
    paused.accept(commitOf(2n, [released]));
    expect([paused.holds(held), paused.holds(released)]).toEqual([true, false]);
    // Nothing paused: no more reads, however long.
    now = 60_000;
    await paused.refresh();
    expect(reads).toBe(2);
  });
});
