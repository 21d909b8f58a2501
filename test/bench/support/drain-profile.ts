import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

/**
 * A V8 CPU profile of this process for one timed window (a drain from the relaying app's start to
 * its end), written to the file BENCH_DRAIN_PROFILE names (`<file>-<label>.cpuprofile`); without it,
 * nothing. `node --cpu-prof` would also profile the untimed backlog writes before the window.
 */
export async function profiledWindow(label: string): Promise<() => Promise<void>> {
  const file = process.env.BENCH_DRAIN_PROFILE;
  if (!file) return async () => undefined;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(`${file}-${label}.cpuprofile`, JSON.stringify(profile));
    session.disconnect();
  };
}
