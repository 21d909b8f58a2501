import { Client } from 'pg';
import type { Producer } from 'kafkajs';
import { DatabaseSetup, initializePollingMessageListener, type PollingListenerConfig, type TransactionalLogger } from 'pg-transactional-outbox';
import { pgtoKafkaHandler, pollProcessed, QuietPinoLikeLogger } from './support/pgto';
import { connectedProducer, privateSchema, suffix, warmTopic } from './support/env';
import { createOurRelay } from './support/our-relay';
import { walDrainRuns } from './p1-wal';
import { pgtoReplicationListener } from './p1-pgto-replication';
import { claimOrderIndex, explainClaim } from './support/explain';
import { p1ReaderThreadDrains } from './p1-reader-thread';
import { p1StartDrains } from './p1-start';
import { OUTBOX_DEFAULTS, PostgresOutboxDialect } from './support/outbox';
import { type BenchContext, type Section, table } from './support/report';
import { type Backlog, recordOfRow, seedOutboxTable, seedPgTransactionalOutbox } from './support/seed';
import { fmt, median } from './support/stats';
import { IN_FLIGHT_COUNTS, RAW_KAFKAJS, RAW_LIBRDKAFKA, rawProducerRuns, RELAY_IN_FLIGHT } from './p1-raw-producers';
import { type Contender, p1ContenderRows, p1Summary, WAL_LABEL, WAL_LIBRDKAFKA_LABEL, WAL_MESSAGE_LABEL, WAL_MESSAGE_LIBRDKAFKA_LABEL, WAL_NO_HEADERS_LIBRDKAFKA_LABEL } from './p1-summary';
import { serializationCost } from './support/serialization-cost';

const EVENTS_PER_AGGREGATE = 4;

/**
 * P1: how fast a backlog of N pending rows is drained to the Kafka test broker, ours against
 * raw kafkajs and raw librdkafka producers (the ceilings, one batch in flight and as many as the
 * relays keep), a naive one-row-at-a-time relay and pg-transactional-outbox.
 */
export async function p1Drain(context: BenchContext): Promise<Section> {
  const { services, sizes } = context;
  const backlog: Backlog = { count: sizes.drainRows, eventsPerAggregate: EVENTS_PER_AGGREGATE };
  const { schema, drop } = await privateSchema(services.postgresUrl, 'bench_p1');
  const admin = new Client({ connectionString: services.postgresUrl });
  await admin.connect();
  await admin.query(`SET search_path TO ${schema}`);
  const run = suffix();
  const contenders: Contender[] = [];
  const diagnostics: string[] = [];
  const phaseLines: string[] = [];
  const walCpu: string[] = [];
  const walPosition: string[] = [];
  let start: Awaited<ReturnType<typeof p1StartDrains>> | undefined;
  let readerThread: Awaited<ReturnType<typeof p1ReaderThreadDrains>> | undefined;
  let tableNo = 0;
  const freshTable = async (): Promise<string> => {
    const name = `outbox_${++tableNo}`;
    for (const sql of new PostgresOutboxDialect(name).createTable()) await admin.query(sql);
    return name;
  };

  try {
    // The ceilings: plain kafkajs and librdkafka producers sending the same records from memory, one batch in flight and as many as the relays keep.
    const raw = await rawProducerRuns(context, admin, schema, freshTable, run, backlog);
    for (const inFlight of IN_FLIGHT_COUNTS) contenders.push(fastContender(RAW_KAFKAJS(inFlight), raw.kafkajs.get(inFlight)!, backlog.count));
    for (const inFlight of IN_FLIGHT_COUNTS) contenders.push(fastContender(RAW_LIBRDKAFKA(inFlight), raw.librdkafka.get(inFlight)!, backlog.count));
    walCpu.push(...raw.cpu);

    // Ours as shipped (defaults), then two references: a larger batch (an option), and the
    // shipped table plus one index whose predicate matches the claim's ordering subquery (a
    // user-side migration, to show what the claim statement costs; library code is unchanged).
    const claimOrderPredicate = /WHERE status (.*)$/.exec((await claimOrderIndex('t')) ?? '')?.[1];
    const variants = [
      { key: 'ours', batchSize: OUTBOX_DEFAULTS.batchSize, extraIndex: false, label: '**ours**: `OutboxRelay` + `createSqlOutboxStore` + `ClientProxyTransport`(`ClientKafka`), defaults (batchSize 100)' },
      {
        key: 'metrics',
        batchSize: OUTBOX_DEFAULTS.batchSize,
        extraIndex: false,
        metrics: true,
        label: 'ours, defaults, with Prometheus metrics fed and scraped every second (the ≤ 5 % bar)',
      },
      {
        key: 'serial',
        batchSize: OUTBOX_DEFAULTS.batchSize,
        maxBatchesInFlight: 1,
        extraIndex: false,
        label: 'ours with `maxBatchesInFlight: 1` (claim → publish → settle one batch at a time; reference)',
      },
      {
        key: 'unnamed',
        batchSize: OUTBOX_DEFAULTS.batchSize,
        preparedStatements: false,
        extraIndex: false,
        label: 'ours with `preparedStatements: false` (claim and settles parsed and planned on every call; reference)',
      },
      { key: 'b500', batchSize: 500, extraIndex: false, label: 'ours with `batchSize: 500` (an option; reference)' },
      { key: 'librdkafka', batchSize: OUTBOX_DEFAULTS.batchSize, extraIndex: false, kafkaClient: 'librdkafka' as const, label: 'ours, defaults, with `ConfluentKafkaTransport` (librdkafka) instead of `ClientKafka`' },
      ...(claimOrderPredicate
        ? [{ key: 'idx', batchSize: OUTBOX_DEFAULTS.batchSize, extraIndex: true, label: `ours, defaults, + an index \`WHERE status ${claimOrderPredicate}\` matching the claim’s subquery (reference)` }]
        : []),
    ];
    for (const variant of variants) {
      const runs: number[] = [];
      for (let round = 1; round <= sizes.rounds; round++) {
        const ourTable = `ours_${variant.key}_${round}`;
        const topic = `bench-p1-${variant.key}-${run}-${round}`;
        const ours = await createOurRelay({
          postgresUrl: services.postgresUrl,
          schema,
          table: ourTable,
          brokers: services.kafkaBrokers,
          owner: `p1-${run}-${variant.key}-${round}`,
          batchSize: variant.batchSize,
          createTable: true,
          metrics: 'metrics' in variant && variant.metrics,
          maxBatchesInFlight: 'maxBatchesInFlight' in variant ? variant.maxBatchesInFlight : undefined,
          preparedStatements: 'preparedStatements' in variant ? variant.preparedStatements : undefined,
          kafkaClient: 'kafkaClient' in variant ? variant.kafkaClient : undefined,
        });
        const first = round === 1 && (variant.key === 'ours' || variant.key === 'idx');
        try {
          if (variant.extraIndex) {
            await admin.query((await claimOrderIndex(ourTable))!);
          }
          await seedOutboxTable(admin, schema, ourTable, topic, backlog);
          await warmTopic(await ours.client.connect(), topic);
          if (first) diagnostics.push(...(await explainClaim(admin, ourTable, `${variant.key}: before the drain (${fmt(backlog.count, 0)} pending)`)));
          const started = performance.now();
          await ours.relay.trigger();
          const seconds = (performance.now() - started) / 1000;
          const published = Number((await admin.query(`SELECT count(*) AS n FROM "${ourTable}" WHERE status = 'published'`)).rows[0].n);
          if (published !== backlog.count || ours.logger.errors + ours.logger.warnings > 0) {
            throw new Error(`our relay published ${published} of ${backlog.count} rows (${ours.logger.first.join('; ')})`);
          }
          runs.push(published / seconds);
          const { claim, publish, settle } = ours.phases;
          const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
          phaseLines.push(
            `| ${variant.key} | ${round} | ${claim.length} | ${fmt(median(claim), 2)} / ${fmt(sum(claim) / claim.length, 2)} | ${fmt(median(publish), 2)} / ${fmt(sum(publish) / Math.max(1, publish.length), 2)} | ` +
              `${fmt(median(settle), 2)} / ${fmt(sum(settle) / Math.max(1, settle.length), 2)} | ${fmt((100 * (sum(claim) + sum(publish) + sum(settle))) / (seconds * 1000), 0)} % |`,
          );
          if (first) diagnostics.push(...(await explainClaim(admin, ourTable, `${variant.key}: after the drain (0 pending, ${fmt(backlog.count, 0)} published)`, false)));
        } finally {
          await ours.close();
          await admin.query(`DROP TABLE "${ourTable}"`);
        }
        context.log(`P1 ${variant.key} round ${round}: ${fmt(runs.at(-1))} msg/s`);
      }
      contenders.push(fastContender(variant.label, runs, backlog.count));
    }

    // The WAL delivery mode through a Nest app (its stream relay needs the module's slot and reader), module defaults, then batches of 500.
    // One unreported drain of 2,000 events first: the stream's code paths (reader, decoding, relay) run for the first time in this process.
    await walDrainRuns(context, { count: 2_000, eventsPerAggregate: EVENTS_PER_AGGREGATE }, 'walwarm', undefined, 1);
    for (const [label, key, batchSize] of [[WAL_LABEL, 'wal', undefined], ['ours (WAL) with `batchSize: 500` (an option; reference)', 'wal500', 500]] as const) {
      const { runs, cpu, position } = await walDrainRuns(context, backlog, key, batchSize);
      contenders.push(fastContender(label, runs, backlog.count));
      walCpu.push(...cpu);
      walPosition.push(...position);
    }
    {
      // The same unreported warm-up through ConfluentKafkaTransport, whose code has not run in this process yet.
      await walDrainRuns(context, { count: 2_000, eventsPerAggregate: EVENTS_PER_AGGREGATE }, 'walrdwarm', undefined, 1, 'librdkafka');
      const { runs, cpu } = await walDrainRuns(context, backlog, 'walrd', undefined, context.sizes.rounds, 'librdkafka');
      contenders.push(fastContender(WAL_LIBRDKAFKA_LABEL, runs, backlog.count));
      walCpu.push(...cpu);
    }
    // The WAL-only write, which a lost slot loses (docs/wal-mode.md, "What survives what"): what the rows cost beside it.
    for (const [label, key, client] of [[WAL_MESSAGE_LABEL, 'walmsg', 'kafkajs'], [WAL_MESSAGE_LIBRDKAFKA_LABEL, 'walmsgrd', 'librdkafka']] as const) {
      const { runs, cpu } = await walDrainRuns(context, backlog, key, undefined, context.sizes.rounds, client, 'message');
      contenders.push(fastContender(label, runs, backlog.count));
      walCpu.push(...cpu);
    }
    {
      // The envelope's fields in the body only: what the six outbox-* header objects a record cost librdkafka's binding.
      const { runs, cpu } = await walDrainRuns(context, backlog, 'walmsgrdbare', undefined, context.sizes.rounds, 'librdkafka', 'message', 'none');
      contenders.push(fastContender(WAL_NO_HEADERS_LIBRDKAFKA_LABEL, runs, backlog.count));
      walCpu.push(...cpu);
    }

    // The WAL read and decoded on a worker thread beside the app's thread, the two taking turns.
    readerThread = await p1ReaderThreadDrains(context, backlog);

    // The start: a relaying app created on a backlog, with and without its transports readied at bootstrap, beside the warm drain.
    start = await p1StartDrains(context, { count: sizes.startRows, eventsPerAggregate: EVENTS_PER_AGGREGATE });

    contenders.push(await naiveRelay(context, admin, schema, await freshTable(), `bench-p1-naive-${run}`, backlog));
    // As its README's producer example configures it, then with a larger batch for reference.
    contenders.push(await pgTransactionalOutbox(context, admin, schema, `bench-p1-pgto-${run}`, backlog, { batchSize: 5, pollMs: 250, table: 'pgto_outbox_5' }));
    contenders.push(await pgTransactionalOutbox(context, admin, schema, `bench-p1-pgto100-${run}`, backlog, { batchSize: 100, pollMs: 250, table: 'pgto_outbox_100' }));
    const replication = await pgtoReplicationListener(context, admin, schema, `bench-p1-pgtorepl-${run}`, backlog);
    contenders.push({ ...replication, runs: [replication.perSecond] });
  } finally {
    await admin.end();
    await drop();
  }

  const serialization = await serializationCost(sizes.drainRows, sizes.rounds + 1);
  const pgtoVariants = contenders.filter((c) => c.name.startsWith('pg-transactional-outbox'));
  const { header, rows } = p1ContenderRows(contenders);
  return {
    id: 'P1',
    title: `P1 — relay drain of ${fmt(backlog.count, 0)} pending rows (${EVENTS_PER_AGGREGATE} events per aggregate, interleaved)`,
    body: [
      ...table(header, rows),
      '',
      `Every contender drains its own copy of the same backlog into a topic of its own with \`acks: -1\`; "msg/s" counts rows the broker acknowledged and the contender recorded as sent. ` +
        `Fast contenders ran ${sizes.rounds} times (median shown); capped ones ran once for at most ${fmt(sizes.slowContenderCapMs / 1000)} s.` +
        ` The raw producers send from memory one batch at a time and ${RELAY_IN_FLIGHT} at a time, as many as the table relay (\`maxBatchesInFlight\`) and the WAL stream keep by default: every ratio to a raw producer in this section and its summary is to the row at ${RELAY_IN_FLIGHT} in flight, of the same client unless named.`,
      '',
      'The WAL rows write the same backlog (same aggregates, order and payloads) beforehand through `OutboxPublisher.add` of a write-only instance (`delivery: \'wal\'`, `relay: false`; 100 events per transaction, one logical message each), then time a relaying Nest app (`ClientsModule` Kafka client, `acks: -1`) from its start (init included) until the slot is confirmed past the last commit, which it is only after the broker acknowledged everything before it; a drain that moved any message to the outbox table fails. One unreported WAL drain of 2,000 events runs first (the table relay\'s code is warm from the variants before it). ' +
        `CPU during raw kafkajs' sends and each WAL drain, % of one core of the 2 (\`process.cpuUsage\` of this process, which runs the sender or the relaying app; /proc of PostgreSQL's processes and of the broker): ${walCpu.join('; ')}.`,
      '',
      `What remembering the stream's position costs (it bounds the duplicates after a PostgreSQL restart to what was in flight): ${walPosition.join('; ')}.`,
      '',
      ...(readerThread?.body ?? []),
      '',
      ...(start?.body ?? []),
      '',
      ...serialization.body,
      '',
      'pg-transactional-outbox runs its polling listener (twice) and its logical replication listener (a slot created before its backlog is inserted; the same rows, in one transaction).',
      ...pgtoVariants.map((variant) => `- ${variant.note}`),
      '',
      'Where our relay’s time goes (measured around the store’s `claim`/`markPublished` and the transport’s `publishBatch`; median / mean ms per batch; the last column is the share of the drain’s wall time they cover, above 100 % when batches in flight overlap):',
      '',
      '| variant | round | batches | claim ms | publish ms (Kafka send, acks −1) | settle ms (`markPublished`) | covered |',
      '|---|---|---|---|---|---|---|',
      ...phaseLines,
      '',
      'EXPLAIN (ANALYZE, BUFFERS) of the claim statement as the library’s store issues it (run in a transaction that is rolled back):',
      '',
      ...diagnostics,
    ],
    summary: [...p1Summary(contenders), ...(readerThread?.summary ?? []), ...(start?.summary ?? []), ...serialization.summary],
  };
}

function fastContender(name: string, runs: number[], count: number): Contender {
  const perSecond = median(runs);
  return { name, perSecond, runs, drained: count, seconds: count / perSecond, capped: false };
}

/** The tutorial design: one transaction per row — claim it with SKIP LOCKED, send it, mark it, commit. */
async function naiveRelay(context: BenchContext, admin: Client, schema: string, naiveTable: string, topic: string, backlog: Backlog): Promise<Contender> {
  const { services, sizes } = context;
  await seedOutboxTable(admin, schema, naiveTable, topic, backlog);
  const client = new Client({ connectionString: services.postgresUrl, options: `-c search_path=${schema}` });
  await client.connect();
  const producer = await connectedProducer(services.kafkaBrokers, `bench-p1-naive`);
  let drained = 0;
  let seconds = 0;
  try {
    await warmTopic(producer, topic);
    const started = performance.now();
    const deadline = started + sizes.slowContenderCapMs;
    while (performance.now() < deadline) {
      await client.query('BEGIN');
      const { rows } = await client.query(`SELECT * FROM "${naiveTable}" WHERE status = 'pending' ORDER BY position LIMIT 1 FOR UPDATE SKIP LOCKED`);
      if (rows.length === 0) {
        await client.query('COMMIT');
        break;
      }
      await producer.send({ topic: rows[0].destination, acks: -1, messages: [recordOfRow(rows[0])] });
      await client.query(`UPDATE "${naiveTable}" SET status = 'published', published_at = now() WHERE position = $1`, [rows[0].position]);
      await client.query('COMMIT');
      drained++;
    }
    seconds = (performance.now() - started) / 1000;
  } finally {
    await producer.disconnect();
    await client.end();
    await admin.query(`DROP TABLE "${naiveTable}"`);
  }
  context.log(`P1 naive relay: ${drained} rows in ${fmt(seconds)} s`);
  return { name: 'naive relay: 1 row per transaction (`SELECT … FOR UPDATE SKIP LOCKED LIMIT 1`, send, mark, commit)', perSecond: drained / seconds, runs: [drained / seconds], drained, seconds, capped: drained < backlog.count };
}

/**
 * pg-transactional-outbox 0.5.7 with its polling listener configured like the producer example
 * of its README (batch 5, poll every 250 ms, attempt/poison protection off for the outbox), its
 * own table, indexes and `next_outbox_messages` function from `DatabaseSetup`; `segment` =
 * aggregate id so that it keeps the same per-aggregate order as ours. The message handler sends
 * each message with kafkajs (`acks: -1`), as its README's publisher does with RabbitMQ.
 */
async function pgTransactionalOutbox(
  context: BenchContext,
  admin: Client,
  schema: string,
  topic: string,
  backlog: Backlog,
  variant: { batchSize: number; pollMs: number; table: string },
): Promise<Contender> {
  const { services, sizes } = context;
  const name =
    variant.batchSize === 5
      ? 'pg-transactional-outbox 0.5.7, polling listener as in its README (batch 5, poll 250 ms)'
      : `pg-transactional-outbox 0.5.7 with \`nextMessagesBatchSize: ${variant.batchSize}\` (for reference)`;
  const pgtoTable = variant.table;
  const functionName = `next_${variant.table}`;
  const setup = { outboxOrInbox: 'outbox' as const, database: new URL(services.postgresUrl).pathname.slice(1), schema, table: pgtoTable, listenerRole: 'postgres' };
  await admin.query(DatabaseSetup.dropAndCreateTable(setup));
  await admin.query(DatabaseSetup.createPollingFunction({ ...setup, nextMessagesSchema: schema, nextMessagesName: functionName }));
  await admin.query(DatabaseSetup.setupPollingIndexes({ ...setup, nextMessagesName: functionName }));
  await seedPgTransactionalOutbox(admin, schema, pgtoTable, backlog);
  // What one call of its next-messages function costs with the whole backlog pending (rolled back).
  await admin.query('BEGIN');
  const callStarted = performance.now();
  await admin.query(`SELECT count(*) FROM "${schema}"."${functionName}"(1, 5000)`);
  const callMs = performance.now() - callStarted;
  await admin.query('ROLLBACK');

  const producer: Producer = await connectedProducer(services.kafkaBrokers, 'bench-p1-pgto');
  await warmTopic(producer, topic);
  const publisher = pgtoKafkaHandler(producer, topic);
  const logger = new QuietPinoLikeLogger();
  const config: PollingListenerConfig = {
    outboxOrInbox: 'outbox',
    dbListenerConfig: { connectionString: services.postgresUrl },
    settings: {
      dbSchema: schema,
      dbTable: pgtoTable,
      enableMaxAttemptsProtection: false,
      enablePoisonousMessageProtection: false,
      nextMessagesBatchSize: variant.batchSize,
      nextMessagesFunctionSchema: schema,
      nextMessagesFunctionName: functionName,
      nextMessagesPollingIntervalInMs: variant.pollMs,
    },
  };
  const started = performance.now();
  const deadline = started + sizes.slowContenderCapMs;
  const [shutdown] = initializePollingMessageListener(config, publisher, logger as unknown as TransactionalLogger);
  let outcome = { processed: 0, seconds: 0, problems: '' };
  try {
    outcome = await pollProcessed(admin, `"${schema}"."${pgtoTable}"`, backlog.count, started, deadline, logger);
  } finally {
    await shutdown();
    await producer.disconnect();
    await admin.query(`DROP TABLE "${pgtoTable}" CASCADE`);
  }
  const { processed, seconds, problems } = outcome;
  context.log(`P1 ${name}: ${processed} rows in ${fmt(seconds)} s; ${problems}`);
  const note = `batch ${variant.batchSize}: one call of \`${functionName}(1, …)\` with ${fmt(backlog.count, 0)} rows pending took ${fmt(callMs)} ms; ${problems}.`;
  return { name, perSecond: processed / seconds, runs: [processed / seconds], drained: processed, seconds, capped: processed < backlog.count, note };
}
