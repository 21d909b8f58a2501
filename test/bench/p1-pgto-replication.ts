import type { Client } from 'pg';
import {
  createReplicationMutexConcurrencyController,
  DatabaseSetup,
  initializeReplicationMessageListener,
  type ReplicationListenerConfig,
  type TransactionalLogger,
} from 'pg-transactional-outbox';
import { connectedProducer, waitUntil, warmTopic } from './support/env';
import { pgtoKafkaHandler, pollProcessed, QuietPinoLikeLogger } from './support/pgto';
import type { BenchContext } from './support/report';
import { type Backlog, seedPgTransactionalOutbox } from './support/seed';
import { fmt } from './support/stats';

export interface ReplicationOutcome {
  name: string;
  perSecond: number;
  drained: number;
  seconds: number;
  capped: boolean;
  note: string;
}

/**
 * pg-transactional-outbox 0.5.7's logical replication listener, set up as its README's producer
 * example: `DatabaseSetup.setupReplicationCore` (a publication of its table, `publish = 'insert'`),
 * a `pgoutput` slot, `initializeReplicationMessageListener` with the mutex concurrency controller
 * (one message at a time, in WAL order) and the same Kafka handler as its polling listener. The slot
 * exists before the backlog is inserted (it streams only what is written after it), the backlog is
 * the same as the others', and the clock runs from the listener's start until every row has
 * `processed_at`, or the cap. One role (`postgres`, a superuser with REPLICATION).
 */
export async function pgtoReplicationListener(context: BenchContext, admin: Client, schema: string, topic: string, backlog: Backlog): Promise<ReplicationOutcome> {
  const { services, sizes } = context;
  const name = 'pg-transactional-outbox 0.5.7, **replication listener** as in its README (pgoutput slot, mutex concurrency controller)';
  const table = 'pgto_replication';
  const publication = `${schema}_pgto_pub`;
  const slot = `${schema}_pgto_slot`;
  const setup = { outboxOrInbox: 'outbox' as const, database: new URL(services.postgresUrl).pathname.slice(1), schema, table, listenerRole: 'postgres', publication, replicationSlot: slot };
  await admin.query(DatabaseSetup.dropAndCreateTable(setup));
  await admin.query(DatabaseSetup.setupReplicationCore(setup));
  // Its `setupReplicationSlot` script drops and creates in one string; the creation must be a transaction of its own.
  await admin.query(`SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, [slot]);
  const producer = await connectedProducer(services.kafkaBrokers, 'bench-p1-pgto-replication');
  await warmTopic(producer, topic);
  await seedPgTransactionalOutbox(admin, schema, table, backlog);

  const logger = new QuietPinoLikeLogger();
  const config: ReplicationListenerConfig = {
    outboxOrInbox: 'outbox',
    dbListenerConfig: { connectionString: services.postgresUrl },
    settings: { dbSchema: schema, dbTable: table, enableMaxAttemptsProtection: false, enablePoisonousMessageProtection: false, dbPublication: publication, dbReplicationSlot: slot },
  };
  const started = performance.now();
  const deadline = started + sizes.slowContenderCapMs;
  const [shutdown] = initializeReplicationMessageListener(config, pgtoKafkaHandler(producer, topic), logger as unknown as TransactionalLogger, {
    concurrencyStrategy: createReplicationMutexConcurrencyController(),
  });
  let outcome = { processed: 0, seconds: 0, problems: '' };
  try {
    outcome = await pollProcessed(admin, `"${schema}"."${table}"`, backlog.count, started, deadline, logger);
  } finally {
    await shutdown();
    await producer.disconnect();
    // The slot is freed when its walsender ends, a moment after the listener's connection closed.
    await waitUntil('the listener’s slot released', async () => (await admin.query(`SELECT active FROM pg_replication_slots WHERE slot_name = $1`, [slot])).rows[0]?.active === false, 30_000, 100);
    await admin.query(`SELECT pg_drop_replication_slot($1)`, [slot]);
    await admin.query(`DROP PUBLICATION IF EXISTS ${publication}`);
    await admin.query(`DROP TABLE "${schema}"."${table}" CASCADE`);
  }
  const { processed, seconds, problems } = outcome;
  context.log(`P1 ${name}: ${processed} rows in ${fmt(seconds)} s; ${problems}`);
  return {
    name,
    perSecond: processed / seconds,
    drained: processed,
    seconds,
    capped: processed < backlog.count,
    note: `replication listener: ${problems}; it handles one message at a time, each in its own transaction (handler, then \`processed_at\`), and sends each as one produce request.`,
  };
}
