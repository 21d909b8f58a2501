import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { postgresOptions, privateSchema } from './support/env';
import { CreateInboxPoisonTable, CreateInboxTable, POISON_DEFAULTS, PoisonPolicy, TypeOrmInbox, TypeOrmInboxStore, TypeOrmPoisonStore } from './support/outbox';
import { type BenchContext, type Section, table } from './support/report';
import { distribution, fmt, type Distribution } from './support/stats';

const WORKERS = 8;

/**
 * P7: what the inbox costs a consumer. The same side effect (one INSERT) per message, by 8
 * concurrent workers on PostgreSQL: in a plain transaction, through `TypeOrmInbox.process`
 * (one more INSERT of the mark in that transaction), and the same messages again through the
 * inbox (every one a duplicate: the mark is found and the work skipped).
 */
export async function p7Inbox(context: BenchContext): Promise<Section> {
  const { schema, drop } = await privateSchema(context.services.postgresUrl, 'bench_p7_inbox');
  const dataSource = new DataSource({ ...postgresOptions(context.services.postgresUrl, schema, WORKERS + 2), migrations: [CreateInboxTable, CreateInboxPoisonTable] });
  await dataSource.initialize();
  try {
    await dataSource.runMigrations();
    await dataSource.query('CREATE TABLE side_effects (n bigserial PRIMARY KEY, message_id uuid NOT NULL)');
    const inbox = new TypeOrmInbox(dataSource, new TypeOrmInboxStore(dataSource, 'outbox_inbox'));
    // With the poison policy, as OutboxInboxModule runs it by default: nothing more runs for a message that succeeds.
    const guarded = new TypeOrmInbox(dataSource, new TypeOrmInboxStore(dataSource, 'outbox_inbox'), undefined, new PoisonPolicy(new TypeOrmPoisonStore(dataSource, 'outbox_inbox_poison', 'outbox_inbox'), { ...POISON_DEFAULTS }));
    const count = context.sizes.sequentialSaves * 2;
    const work = (id: string) => (manager: DataSource['manager']) => manager.query('INSERT INTO side_effects (message_id) VALUES ($1)', [id]);
    const ids = Array.from({ length: count }, () => randomUUID());

    context.log(`P7: ${count} messages per variant, ${WORKERS} workers`);
    const plain = await measure(ids, (id) => dataSource.transaction(work(id)));
    const marked = await measure(ids, (id) => inbox.process(id, 'bench.projector', work(id)));
    const skipped = await measure(ids, (id) => inbox.process(id, 'bench.projector', work(id)));
    const poisonGuarded = await measure(ids, (id) => guarded.process(id, 'bench.guarded-projector', work(id)));
    const [{ n }] = await dataSource.query('SELECT COUNT(*) AS n FROM side_effects');
    if (Number(n) !== count * 3) throw new Error(`P7: expected ${count * 3} side effects (plain + first inbox pass + poison-guarded pass), found ${n}`);

    const row = (label: string, m: Measurement) => [label, fmt(m.perSecond, 0), fmt(m.latency.p50, 2), fmt(m.latency.p99, 2)];
    const overhead = plain.perSecond / marked.perSecond;
    return {
      id: 'P7',
      title: `P7 — the inbox's cost to a consumer (${count} messages per variant, ${WORKERS} concurrent workers, PostgreSQL)`,
      body: [
        ...table(
          ['variant', 'messages/s', 'p50 ms', 'p99 ms'],
          [row('plain transaction, one INSERT', plain), row('through the inbox (mark + INSERT, one transaction)', marked), row('through the inbox, every message a duplicate (skipped)', skipped), row('through the inbox with the poison policy on (the default)', poisonGuarded)],
        ),
        '',
        `The inbox adds one INSERT … ON CONFLICT DO NOTHING to the handler's transaction: ${fmt(overhead, 2)}× the time of the plain transaction here. ` +
          `A duplicate costs a transaction with that one statement and no work. ` +
          `The poison policy (on by default) writes only when a handler fails: with it, ${fmt(marked.perSecond / poisonGuarded.perSecond, 2)}× the time of the inbox without it.`,
      ],
      summary: [
        { bench: 'P7', figure: 'consumer throughput through the inbox vs plain transaction', value: `${fmt(marked.perSecond, 0)} vs ${fmt(plain.perSecond, 0)} msg/s (${fmt(overhead, 2)}×)` },
      ],
    };
  } finally {
    await dataSource.destroy();
    await drop();
  }
}

interface Measurement {
  perSecond: number;
  latency: Distribution;
}

async function measure(ids: string[], handle: (id: string) => Promise<unknown>): Promise<Measurement> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      while (next < ids.length) {
        const id = ids[next++];
        const at = performance.now();
        await handle(id);
        latencies.push(performance.now() - at);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { perSecond: ids.length / seconds, latency: distribution(latencies) };
}
