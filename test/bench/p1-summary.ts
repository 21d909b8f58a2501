import { IN_FLIGHT_COUNTS, RAW_KAFKAJS, RAW_LIBRDKAFKA, RELAY_IN_FLIGHT } from './p1-raw-producers';
import type { SummaryRow } from './support/report';
import { fmt, fmtRatio, ratio } from './support/stats';

export const WAL_LABEL = '**ours (WAL)**: `delivery: \'wal\'` stream relay (`OutboxModule.forRoot` in a Nest app, `ClientKafka`), defaults (`wal.write: \'row\'`, batchSize 100)';
export const WAL_LIBRDKAFKA_LABEL = '**ours (WAL, librdkafka)**: `delivery: \'wal\'` stream relay, `ConfluentKafkaTransport` (`@nest-outbox/outbox/kafka`), defaults (`wal.write: \'row\'`, batchSize 100)';
export const WAL_MESSAGE_LABEL = 'ours (WAL, `wal.write: \'message\'`), `ClientKafka` (the WAL-only write; reference)';
export const WAL_MESSAGE_LIBRDKAFKA_LABEL = 'ours (WAL, `wal.write: \'message\'`), `ConfluentKafkaTransport` (reference)';
export const WAL_NO_HEADERS_LIBRDKAFKA_LABEL = 'ours (WAL, `wal.write: \'message\'`), `ConfluentKafkaTransport`, `envelope.headers: \'none\'` (reference: no `outbox-*` headers)';

export interface Contender {
  name: string;
  /** Messages acknowledged by the broker and recorded as such, per second. */
  perSecond: number;
  runs: number[];
  drained: number;
  seconds: number;
  capped: boolean;
  note?: string;
}

/** P1's contenders table: each row beside ours and beside raw kafkajs at the relays' concurrency. */
export function p1ContenderRows(contenders: Contender[]): { header: string[]; rows: string[][] } {
  const ours = find(contenders, (c) => c.name.startsWith('**ours**'));
  const raw = find(contenders, (c) => c.name === RAW_KAFKAJS(RELAY_IN_FLIGHT));
  return {
    header: ['contender', 'messages', 'msg/s', 'ratio to ours', `ratio to raw kafkajs, ${RELAY_IN_FLIGHT} in flight`],
    rows: contenders.map((c) => [
      c.name,
      `${fmt(c.drained, 0)}${c.capped ? ` (capped at ${fmt(c.seconds)} s)` : ''}`,
      c.runs.length > 1 ? `${fmt(c.perSecond)} (runs: ${c.runs.map((r) => fmt(r)).join(', ')})` : fmt(c.perSecond),
      fmtRatio(ratio(c.perSecond, ours.perSecond)),
      fmtRatio(ratio(c.perSecond, raw.perSecond)),
    ]),
  };
}

/**
 * P1's summary lines. A relay is held against the raw producer of its own client at the relays'
 * concurrency (two batches in flight, as the table relay and the WAL stream keep by default), and
 * against the fastest raw producer; the one-at-a-time figures stay beside for history.
 */
export function p1Summary(contenders: Contender[]): SummaryRow[] {
  const named = (name: string) => find(contenders, (c) => c.name === name);
  const ours = find(contenders, (c) => c.name.startsWith('**ours**'));
  const naive = find(contenders, (c) => c.name.startsWith('naive'));
  const wal = named(WAL_LABEL);
  const walLibrdkafka = named(WAL_LIBRDKAFKA_LABEL);
  const tableLibrdkafka = find(contenders, (c) => c.name.includes('with `ConfluentKafkaTransport`'));
  const [kafkajsOne, kafkajs] = IN_FLIGHT_COUNTS.map((n) => named(RAW_KAFKAJS(n)));
  const [librdkafkaOne, librdkafka] = IN_FLIGHT_COUNTS.map((n) => named(RAW_LIBRDKAFKA(n)));
  const rawProducers: Array<[string, Contender]> = [
    ['raw kafkajs, 1 in flight', kafkajsOne],
    [`raw kafkajs, ${RELAY_IN_FLIGHT} in flight`, kafkajs],
    ['raw librdkafka, 1 in flight', librdkafkaOne],
    [`raw librdkafka, ${RELAY_IN_FLIGHT} in flight`, librdkafka],
  ];
  const [fastestName, fastestRaw] = rawProducers.reduce((best, entry) => (entry[1].perSecond > best[1].perSecond ? entry : best));
  const withMetrics = find(contenders, (c) => c.name.includes('Prometheus metrics'));
  const serial = find(contenders, (c) => c.name.includes('maxBatchesInFlight: 1'));
  const unnamed = find(contenders, (c) => c.name.includes('preparedStatements: false'));
  const pgtoVariants = contenders.filter((c) => c.name.startsWith('pg-transactional-outbox'));
  const pgto = pgtoVariants[0];
  const pgtoReplication = find(pgtoVariants, (c) => c.name.includes('replication listener'));
  const x = (value: number, of: Contender) => fmtRatio(ratio(value, of.perSecond));
  const both = (value: number, at: Contender, one: Contender) => `${x(value, at)} (${x(value, one)} to 1 in flight)`;
  const k = `raw kafkajs (${RELAY_IN_FLIGHT} in flight)`;
  const l = `raw librdkafka (${RELAY_IN_FLIGHT} in flight)`;
  return [
    { bench: 'P1', figure: 'ours, drain msg/s', value: fmt(ours.perSecond) },
    { bench: 'P1', figure: `ours / ${k}`, value: both(ours.perSecond, kafkajs, kafkajsOne), aim: '≥ 0.7×', met: ours.perSecond >= kafkajs.perSecond * 0.7 },
    { bench: 'P1', figure: 'ours (WAL), drain msg/s', value: fmt(wal.perSecond) },
    { bench: 'P1', figure: `ours (WAL) / ${k}`, value: both(wal.perSecond, kafkajs, kafkajsOne), aim: '≥ 0.8×', met: wal.perSecond >= kafkajs.perSecond * 0.8 },
    { bench: 'P1', figure: 'ours (WAL) / ours (table)', value: x(wal.perSecond, ours) },
    {
      bench: 'P1',
      figure: "ours (WAL): wal.write 'row' (default) / 'message', ClientKafka; ConfluentKafkaTransport",
      value: `${x(wal.perSecond, named(WAL_MESSAGE_LABEL))}; ${x(walLibrdkafka.perSecond, named(WAL_MESSAGE_LIBRDKAFKA_LABEL))}`,
    },
    {
      bench: 'P1',
      figure: "ours (WAL, 'message', librdkafka): envelope.headers 'none' / 'all'; 'none' / raw librdkafka (2 in flight)",
      value: `${x(named(WAL_NO_HEADERS_LIBRDKAFKA_LABEL).perSecond, named(WAL_MESSAGE_LIBRDKAFKA_LABEL))}; ${x(named(WAL_NO_HEADERS_LIBRDKAFKA_LABEL).perSecond, librdkafka)}`,
    },
    { bench: 'P1', figure: `raw kafkajs, raw librdkafka: ${RELAY_IN_FLIGHT} in flight / 1 in flight`, value: `${x(kafkajs.perSecond, kafkajsOne)}, ${x(librdkafka.perSecond, librdkafkaOne)}` },
    { bench: 'P1', figure: `raw librdkafka / raw kafkajs, both at 1; both at ${RELAY_IN_FLIGHT} in flight`, value: `${x(librdkafkaOne.perSecond, kafkajsOne)}; ${x(librdkafka.perSecond, kafkajs)}` },
    { bench: 'P1', figure: 'ours (WAL, librdkafka), drain msg/s', value: fmt(walLibrdkafka.perSecond) },
    { bench: 'P1', figure: `ours (WAL, librdkafka) / ${l}`, value: both(walLibrdkafka.perSecond, librdkafka, librdkafkaOne), aim: '≥ 0.9×', met: walLibrdkafka.perSecond >= librdkafka.perSecond * 0.9 },
    { bench: 'P1', figure: `ours (WAL, librdkafka) / ${k}`, value: both(walLibrdkafka.perSecond, kafkajs, kafkajsOne), aim: '≥ 1.5×', met: walLibrdkafka.perSecond >= kafkajs.perSecond * 1.5 },
    { bench: 'P1', figure: `ours (WAL, librdkafka) / fastest raw producer (${fastestName})`, value: x(walLibrdkafka.perSecond, fastestRaw) },
    { bench: 'P1', figure: `ours (table, librdkafka) / ${l}; / ${k}`, value: `${x(tableLibrdkafka.perSecond, librdkafka)}; ${x(tableLibrdkafka.perSecond, kafkajs)}` },
    { bench: 'P1', figure: 'ours (WAL) / pg-transactional-outbox replication listener', value: pgtoReplication.perSecond > 0 ? x(wal.perSecond, pgtoReplication) : 'n/a' },
    { bench: 'P1', figure: 'ours with metrics / without', value: x(withMetrics.perSecond, ours), aim: '≥ 0.95×', met: withMetrics.perSecond >= ours.perSecond * 0.95 },
    { bench: 'P1', figure: 'ours (2 batches in flight) / one batch at a time', value: x(ours.perSecond, serial) },
    { bench: 'P1', figure: 'ours (named statements) / `preparedStatements: false`', value: x(ours.perSecond, unnamed) },
    { bench: 'P1', figure: 'ours / naive relay', value: x(ours.perSecond, naive), aim: '≥ 10×', met: ours.perSecond >= naive.perSecond * 10 },
    {
      bench: 'P1',
      figure: 'ours / pg-transactional-outbox',
      value: pgto.perSecond > 0 ? x(ours.perSecond, pgto) : 'n/a',
      aim: '> 1×',
      met: pgto.perSecond > 0 ? ours.perSecond > pgto.perSecond : undefined,
    },
  ];
}

function find(contenders: Contender[], test: (c: Contender) => boolean): Contender {
  const found = contenders.find(test);
  if (!found) throw new Error(`P1's summary misses a contender it reads (${test.toString()}); was a label renamed in p1-drain.ts?`);
  return found;
}
