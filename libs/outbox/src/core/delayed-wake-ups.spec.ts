import { DelayedWakeUps } from './delayed-wake-ups';

describe('DelayedWakeUps', () => {
  beforeEach(() => jest.useFakeTimers({ now: 0 }));
  afterEach(() => jest.useRealTimers());

  it('wakes once per due time, earliest first, whatever the order they were scheduled in', () => {
    const wakes: number[] = [];
    const wakeUps = new DelayedWakeUps(() => wakes.push(Date.now()));
    wakeUps.schedule(3_000);
    wakeUps.schedule(1_000);
    wakeUps.schedule(2_000);
    jest.advanceTimersByTime(10_000);
    expect(wakes).toEqual([1_005, 2_005, 3_005]);
  });

  it('does nothing after stop', () => {
    const wake = jest.fn();
    const wakeUps = new DelayedWakeUps(wake);
    wakeUps.schedule(100);
    wakeUps.stop();
    wakeUps.schedule(100);
    jest.advanceTimersByTime(1_000);
    expect(wake).not.toHaveBeenCalled();
  });
});
