import { createHash } from 'node:crypto';
import { privateSchema } from './support/env';
import { drainThroughNestApp, type NestDrainOptions } from './support/nest-drain';
import type { BenchContext } from './support/report';
import { aggregatesOf, type Backlog } from './support/seed';
import { fmt } from './support/stats';
import { microsPerPositionSave, positionSaves } from './support/wal-position-cost';

// Events per saving transaction while the backlog is written (not timed): one INSERT, or one logical message, each.
const PER_TRANSACTION = 100;

/**
 * P1's WAL rows: the WAL delivery mode draining the same backlog as the other contenders (same
 * aggregates, interleaving and payloads as `seedOutboxTable`), written beforehand through
 * `OutboxPublisher.add` of a write-only instance, then streamed by a relaying Nest app from its
 * start until the slot is confirmed past the last commit. Returns msg/s per round, and per round
 * the CPU each party used during the drain.
 */
export async function walDrainRuns(
  context: BenchContext,
  backlog: Backlog,
  key: string,
  batchSize?: number,
  rounds = context.sizes.rounds,
  kafkaClient: 'kafkajs' | 'librdkafka' = 'kafkajs',
  walWrite: 'row' | 'message' = 'row',
  envelopeHeaders?: 'all' | 'id-and-type' | 'none',
): Promise<{ runs: number[]; cpu: string[]; position: string[] }> {
  const { services } = context;
  const runs: number[] = [];
  const cpu: string[] = [];
  const position: string[] = [];
  for (let round = 1; round <= rounds; round++) {
    const { schema, drop } = await privateSchema(services.postgresUrl, `bench_p1_${key}`);
    try {
      const { seconds, startSeconds, cpu: used } = await drainThroughNestApp({
        services,
        schema,
        migrate: true,
        mode: 'wal',
        topic: `bench-p1-${key}-${schema}`,
        slotName: `${schema}_slot`,
        batchSize,
        kafkaClient,
        walWrite,
        envelopeHeaders,
        write: backlogWriter(backlog),
      });
      runs.push(backlog.count / seconds);
      cpu.push(`${key} round ${round}: relay process ${fmt(used.relay, 0)} %, PostgreSQL ${fmt(used.postgres, 0)} %, Kafka test broker ${fmt(used.broker, 0)} %`);
      context.log(`P1 ${key} round ${round}: ${fmt(runs.at(-1))} msg/s (${fmt(seconds, 2)} s, of which the app start ${fmt(startSeconds, 2)} s)`);
      const saves = await positionSaves(services.postgresUrl, schema);
      const micros = await microsPerPositionSave(services.postgresUrl, schema);
      position.push(
        `${key} round ${round}: ${fmt(saves, 0)} position saves for ${fmt(backlog.count, 0)} events (${fmt((1000 * saves) / backlog.count, 1)} per 1,000), ` +
          `${fmt(micros, 0)} µs each (median of 300 back to back): ${fmt((saves * micros) / backlog.count, 2)} µs of PostgreSQL work per event, beside the stream`,
      );
    } finally {
      await drop();
    }
  }
  return { runs, cpu, position };
}

/** Writes the backlog through a write-only instance's publisher, PER_TRANSACTION events per transaction. */
export function backlogWriter(backlog: Backlog): NestDrainOptions['write'] {
  const aggregates = aggregatesOf(backlog);
  return async (publisher, dataSource) => {
    for (let from = 1; from <= backlog.count; from += PER_TRANSACTION) {
      const events: Array<ReturnType<typeof eventOf>> = [];
      for (let g = from; g < Math.min(backlog.count + 1, from + PER_TRANSACTION); g++) events.push(eventOf(g, aggregates));
      await dataSource.transaction((manager) => publisher.add(manager, events));
    }
  };
}

/** Event g of the backlog, as `seedOutboxTable`'s SQL builds it. */
function eventOf(g: number, aggregates: number) {
  const hex = createHash('md5').update(String((g - 1) % aggregates)).digest('hex');
  const parcelId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return {
    type: 'bench.parcel-registered',
    aggregateType: 'parcel',
    aggregateId: parcelId,
    payload: {
      parcelId,
      seq: Math.floor((g - 1) / aggregates),
      label: `parcel-${String(g).padStart(8, '0')}`,
      weightGrams: 100 + (g % 5000),
      note: 'benchmark event for the outbox relay drain',
    },
  };
}
