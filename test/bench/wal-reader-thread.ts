import { benchServices } from './support/env';
import { FULL, QUICK } from './support/report';
import { p1ReaderThreadDrains } from './p1-reader-thread';

/**
 * P1's reader-thread comparison on its own (`wal.readerThread` 'main' beside 'worker', the rounds
 * taking turns), without the rest of P1: READER_THREAD_FULL=1 drains P1's full backlog (100,000
 * events) instead of the quick one (20,000). Services as `npm run bench` starts them.
 *
 *   npx tsc -p test/bench/tsconfig.json && node .bench/build/test/bench/wal-reader-thread.js
 */
async function main(): Promise<void> {
  const sizes = process.env.READER_THREAD_FULL ? FULL : QUICK;
  const { body, summary } = await p1ReaderThreadDrains(
    { services: benchServices(), sizes, log: (message) => process.stderr.write(`${message}\n`) },
    // P1's backlog: four events per aggregate, interleaved.
    { count: sizes.drainRows, eventsPerAggregate: 4 },
  );
  console.log([...body, '', ...summary.map((row) => `- ${row.figure}: ${row.value}`)].join('\n'));
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
