import { privateSchema } from './support/env';
import { drainThroughNestApp, type DeliveryMode } from './support/nest-drain';
import type { BenchContext, SummaryRow } from './support/report';
import type { Backlog } from './support/seed';
import { fmt, median } from './support/stats';
import { backlogWriter } from './p1-wal';

// At least three rounds: one start is a single sample of a few hundred milliseconds.
const MIN_ROUNDS = 3;

interface StartVariant {
  key: string;
  mode: DeliveryMode;
  kafkaClient: 'kafkajs' | 'librdkafka';
  label: string;
  warmUp: boolean;
  clockFrom: 'start' | 'relay';
}

const CLIENTS = { kafkajs: '`ClientKafka`', librdkafka: '`ConfluentKafkaTransport`' } as const;
const VARIANTS: StartVariant[] = (['kafkajs', 'librdkafka'] as const).flatMap((kafkaClient) => {
  const client = CLIENTS[kafkaClient];
  const variant = (key: string, mode: DeliveryMode, warmUp: boolean, clockFrom: 'start' | 'relay', label: string): StartVariant => ({ key: `${key}-${kafkaClient}`, mode, kafkaClient, warmUp, clockFrom, label });
  return [
    variant('table-warm', 'table', true, 'relay', `table, ${client}: warm drain (app up with \`relayStart: 'manual'\`, transports readied, clock from \`OutboxRelayHost.start()\`)`),
    variant('table-cold', 'table', false, 'start', `table, ${client}: from the app's start, transports not readied (before)`),
    variant('table-start', 'table', true, 'start', `table, ${client}: from the app's start, transports readied at bootstrap (now)`),
    variant('wal-cold', 'wal', false, 'start', `WAL, ${client}: from the app's start, transports not readied (before)`),
    variant('wal-start', 'wal', true, 'start', `WAL, ${client}: from the app's start, transports readied at bootstrap (now)`),
  ];
});

/**
 * P1's start: a Nest app (`OutboxModule.forRoot`, Nest's `ClientKafka` or `ConfluentKafkaTransport`, module defaults) created
 * on a backlog of pending events, timed from `NestFactory.createApplicationContext` (init and
 * bootstrap) to the last event acknowledged, with the transports readied at bootstrap and without
 * (the path before, switched off inside the bench only), beside the table relay's warm drain in
 * an app already up. Rounds alternate the variants, so that the machine's drift hits each alike.
 */
export async function p1StartDrains(context: BenchContext, backlog: Backlog): Promise<{ body: string[]; summary: SummaryRow[] }> {
  const { services, sizes } = context;
  const runs = new Map(VARIANTS.map((variant) => [variant.key, { drain: [] as number[], start: [] as number[], first: [] as number[] }]));
  const rounds = Math.max(MIN_ROUNDS, sizes.rounds);
  for (let round = 1; round <= rounds; round++) {
    for (const variant of VARIANTS) {
      const { schema, drop } = await privateSchema(services.postgresUrl, `bench_p1s_${variant.key.replaceAll('-', '_')}`);
      try {
        const { seconds, startSeconds, firstSeconds } = await drainThroughNestApp({
          services,
          schema,
          migrate: true,
          mode: variant.mode,
          topic: `bench-p1-start-${variant.key}-${schema}`,
          slotName: `${schema}_slot`,
          warmUp: variant.warmUp,
          kafkaClient: variant.kafkaClient,
          clockFrom: variant.clockFrom,
          write: backlogWriter(backlog),
        });
        runs.get(variant.key)!.drain.push(seconds * 1000);
        runs.get(variant.key)!.start.push(startSeconds * 1000);
        runs.get(variant.key)!.first.push(firstSeconds * 1000);
        context.log(`P1 start ${variant.key} round ${round}: ${fmt(seconds * 1000, 0)} ms (app start ${fmt(startSeconds * 1000, 0)} ms, first acknowledged at ${fmt(firstSeconds * 1000, 0)} ms)`);
      } finally {
        await drop();
      }
    }
  }
  const ms = (key: string) => median(runs.get(key)!.drain);
  const pair = (key: string) => `${fmt(median(runs.get(key)!.first), 0)} / ${fmt(ms(key), 0)}`;
  const body = [
    `P1's start: ${fmt(backlog.count, 0)} events pending (the P1 backlog's shape) when a relaying Nest app (\`ClientKafka\` or \`ConfluentKafkaTransport\`, \`acks: -1\`, module defaults) is created; ms from \`NestFactory.createApplicationContext\` until the last is acknowledged (no pending row; the WAL slot confirmed past the last commit), median of ${rounds} rounds, the variants taking turns. ` +
      '"After the app is up" is the same drain less the app\'s start: the WAL stream starts at bootstrap whatever `relayStart` says, so that column stands for its warm drain (it began during the start, so it flatters it a little). ' +
      '"Readied at bootstrap": before the relay\'s first claim the module connects each transport and fetches the metadata of the topics the app declares (here `defaultTopic`); "before" starts the app as the library did without it (switched off inside the benchmark only). The topic exists in every variant (created by another producer first). ' +
      '"To the first acknowledged" is when the relay (or the WAL stream) announced its first published message on the `nest-outbox:published` diagnostics channel.',
    '',
    '| variant | ms to the first acknowledged | ms to the last acknowledged (runs) | of which the app start, ms | after the app is up, ms | events/s |',
    '|---|---|---|---|---|---|',
    ...VARIANTS.map((variant) => {
      const { drain, start, first } = runs.get(variant.key)!;
      const warm = variant.clockFrom === 'relay';
      const startNote = warm ? `${fmt(median(start), 0)} (before the clock)` : fmt(median(start), 0);
      const afterUp = warm ? fmt(median(drain), 0) : fmt(median(drain.map((value, index) => value - start[index])), 0);
      return `| ${variant.label} | ${fmt(median(first), 0)} | ${fmt(median(drain), 0)} (${drain.map((value) => fmt(value, 0)).join(', ')}) | ${startNote} | ${afterUp} | ${fmt(backlog.count / (median(drain) / 1000))} |`;
    }),
  ];
  const summary: SummaryRow[] = (['kafkajs', 'librdkafka'] as const).flatMap((client) => [
    {
      bench: 'P1',
      figure: `start on ${fmt(backlog.count, 0)} pending, table, ${CLIENTS[client]}: ms from the app's start to the first / the last acknowledged, readied; before; warm drain`,
      value: `${pair(`table-start-${client}`)}; ${pair(`table-cold-${client}`)}; ${pair(`table-warm-${client}`)}`,
    },
    {
      bench: 'P1',
      figure: `start on ${fmt(backlog.count, 0)} pending, WAL, ${CLIENTS[client]}: ms from the app's start to the first / the last acknowledged, readied; before`,
      value: `${pair(`wal-start-${client}`)}; ${pair(`wal-cold-${client}`)}`,
    },
  ]);
  return { body, summary };
}
