import { execFileSync } from 'node:child_process';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { BenchParcel } from './support/entities';
import { benchServices, privateSchema, REPO_ROOT, sleep, suffix, waitUntil } from './support/env';
import { startBenchApp } from './support/nest-apps';
import { dropWalSlot, OutboxPublisher } from './support/outbox';
import { type BenchContext, QUICK, type Section, type SummaryRow, table } from './support/report';
import { fmt } from './support/stats';

const EVENTS = 1_000;
// How long after the writes the retained WAL is read again while the broker stays down.
const HOLD_MS = 10_000;
const DIVERT_DEADLINE_MS = 120_000;
// The event: one `bench.parcel-registered` with a ~400-byte JSON payload, as P1's backlog.
const PAYLOAD = { note: 'x'.repeat(360), weightGrams: 1234, label: 'parcel-00000001' };

interface Lsns {
  current: string;
  confirmed: string | null;
  restart: string | null;
}

interface Phase {
  what: string;
  /** WAL written by the phase (`pg_current_wal_lsn()` before → after), bytes. */
  written: number;
  /** After the phase: current − restart_lsn and current − confirmed_flush_lsn, bytes (WAL mode). */
  retained?: number;
  unconfirmed?: number;
  note?: string;
}

/**
 * P5's WAL row: what a slot holds while the broker is down. A relaying Nest app (`delivery:
 * 'wal'`) streams; the Kafka test broker goes down (`scripts/services.sh kafka-down`); 1,000 events
 * are written, one per transaction; the slot's retained WAL (`pg_current_wal_lsn()` −
 * `restart_lsn`, and − `confirmed_flush_lsn`) is read at once and after 10 s more, then the broker
 * comes back and the run waits until everything is confirmed or published. Beside it, the WAL the
 * table mode writes for the same events (the INSERTs, then the relay's settles), and the WAL of
 * 1,000 entity saves with their event in each mode, for the capacity model of SCALING.md.
 */
export async function walRetained(context: BenchContext): Promise<{ lines: string[]; summary: SummaryRow[] }> {
  const { services } = context;
  const { schema, drop } = await privateSchema(services.postgresUrl, 'bench_p5_wal');
  const topic = `bench-p5-wal-${suffix()}`;
  const slotName = `${schema}_slot`;
  const admin = new Client({ connectionString: services.postgresUrl });
  await admin.connect();
  const phases: Phase[] = [];
  let brokerDown = false;
  let app: Awaited<ReturnType<typeof startBenchApp>> | undefined;
  const lsns = async (): Promise<Lsns> =>
    (
      await admin.query(
        `SELECT pg_current_wal_lsn()::text AS current, s.confirmed_flush_lsn::text AS confirmed, s.restart_lsn::text AS restart
         FROM (SELECT 1) AS one LEFT JOIN pg_replication_slots s ON s.slot_name = $1`,
        [slotName],
      )
    ).rows[0];
  const diff = async (a: string | null, b: string | null) => (a && b ? Number((await admin.query(`SELECT pg_wal_lsn_diff($1, $2) AS d`, [a, b])).rows[0].d) : Number.NaN);
  const measure = async (what: string, work: () => Promise<void>, wal: boolean): Promise<Phase> => {
    const before = await lsns();
    await work();
    const after = await lsns();
    const phase: Phase = { what, written: await diff(after.current, before.current) };
    if (wal) Object.assign(phase, { retained: await diff(after.current, after.restart), unconfirmed: await diff(after.current, after.confirmed) });
    phases.push(phase);
    return phase;
  };
  try {
    // The WAL mode, relay streaming, then the broker down.
    app = await startBenchApp({
      postgresUrl: services.postgresUrl,
      schema,
      migrate: true,
      kafka: { brokers: services.kafkaBrokers, clientId: 'bench-p5-wal' },
      outbox: { transport: 'KAFKA', delivery: 'wal', wal: { slotName }, resolveTopic: () => topic },
    });
    const publisher = app.app.get(OutboxPublisher);
    const dataSource = app.dataSource;
    await writeEvents(dataSource, publisher, 10, 'warm');
    const warmEnd = (await lsns()).current;
    await waitUntil('the warm-up events confirmed', () => caughtUp(admin, slotName, warmEnd), 30_000);
    brokers('kafka-down', services.servicesDir);
    brokerDown = true;
    const held = await measure(`${EVENTS} events, one per transaction, broker down, WAL relay streaming`, () => writeEvents(dataSource, publisher, EVENTS, 'wal'), true);
    await measure(`… ${HOLD_MS / 1000} s later, broker still down`, () => sleep(HOLD_MS), true);
    phases.at(-1)!.note = `${await rows(admin, schema)} of ${EVENTS} moved to the outbox table by then`;
    // The stream gives a batch up after `wal.attemptsBeforeTable` attempts and moves it to the table, confirming the slot.
    const divertStarted = performance.now();
    await measure(`… until the stream moved them to the outbox table, broker still down`, () => waitUntil('the events moved to the table', async () => (await rows(admin, schema)) >= EVENTS, DIVERT_DEADLINE_MS, 250).then(() => undefined).catch(() => undefined), true);
    phases.at(-1)!.note = `${await rows(admin, schema)} of ${EVENTS} in the outbox table ${fmt((performance.now() - divertStarted) / 1000 + HOLD_MS / 1000, 0)} s after the writes`;
    await measure(`${EVENTS} entity saves (\`BenchParcel\`, one event each), broker down`, () => saveParcels(dataSource, EVENTS), true);
    brokers('kafka-up', services.servicesDir);
    brokerDown = false;
    const end = (await lsns()).current;
    await waitUntil('the slot confirmed and no row pending after the broker came back', async () => (await caughtUp(admin, slotName, end)) && (await pending(admin, schema)) === 0, 180_000, 200);
    await app.app.close();
    app = undefined;
    await dropWalSlot(async (sql, params) => (await admin.query(sql, params)).rows, { slotName, publicationName: slotName });

    // The table mode: the same events written with its relay off, then published by it.
    app = await startBenchApp({ postgresUrl: services.postgresUrl, schema, migrate: false, outbox: { relay: false, resolveTopic: () => topic } });
    await measure(`table mode: ${EVENTS} events, one per transaction (INSERT)`, () => writeEvents(app!.dataSource, app!.app.get(OutboxPublisher), EVENTS, 'table'), false);
    await measure(`table mode: ${EVENTS} entity saves with their event`, () => saveParcels(app!.dataSource, EVENTS), false);
    await app.app.close();
    app = await startBenchApp({ postgresUrl: services.postgresUrl, schema, migrate: false, kafka: { brokers: services.kafkaBrokers, clientId: 'bench-p5-table' }, outbox: { transport: 'KAFKA', resolveTopic: () => topic } });
    await measure(`table mode: the relay publishing those ${2 * EVENTS} rows (claims and settles)`, () => waitUntil('the table drained', async () => (await pending(admin, schema)) === 0, 120_000, 100).then(() => undefined), false);
    context.log(`P5 WAL: ${fmt(held.written / (EVENTS / 1000), 0)} bytes of WAL per 1,000 events, ${fmt(held.retained ?? Number.NaN, 0)} retained`);
  } finally {
    if (brokerDown) brokers('kafka-up', services.servicesDir);
    await app?.app.close();
    await dropWalSlot(async (sql, params) => (await admin.query(sql, params)).rows, { slotName, publicationName: slotName }).catch(() => undefined);
    await admin.end();
    await drop();
  }
  const envelope = Buffer.byteLength(JSON.stringify(PAYLOAD));
  const walEvents = phases[0];
  const lines = [
    ...table(
      ['phase', 'WAL written', 'per event', 'slot retains (current − restart_lsn)', 'unconfirmed (current − confirmed_flush_lsn)', 'note'],
      phases.map((p) => [
        p.what,
        `${fmt(p.written / 1024, 0)} KiB`,
        `${fmt(p.written / (p.what.includes(String(2 * EVENTS)) ? 2 * EVENTS : EVENTS), 0)} B`,
        p.retained === undefined ? '' : `${fmt(p.retained / 1024, 0)} KiB`,
        p.unconfirmed === undefined ? '' : `${fmt(p.unconfirmed / 1024, 0)} KiB`,
        p.note ?? '',
      ]),
    ),
    '',
    `The event: type \`bench.parcel-registered\`, aggregate \`parcel\`, a JSON payload of ${envelope} bytes (the logical message carries the envelope, ~${envelope + 250} bytes); ` +
      `one event per transaction, written through \`OutboxPublisher.add\` (the entity saves: \`transaction(m => m.save(BenchParcel.register(…)))\`, a ~100-byte row and its event with a ~110-byte payload). ` +
      'The slot retains all of the server’s WAL from its `restart_lsn` on, not only the outbox’s: every other write of the database server in the meantime counts too (here there was none). ' +
      'With the broker down the stream tries a batch `wal.attemptsBeforeTable` times (default 3, each bounded by `publishTimeoutMs`, 10 s, with the backoff between) and then moves it, and what follows of its aggregates, to the outbox table, which lets it confirm the slot: the rows above show how long the WAL stayed retained.',
  ];
  const summary: SummaryRow[] = [
    { bench: 'P5', figure: `WAL retained per 1,000 events, broker down (event payload ${envelope} B)`, value: `${fmt((walEvents.retained ?? Number.NaN) / 1024, 0)} KiB (WAL written ${fmt(walEvents.written / 1024, 0)} KiB)` },
  ];
  return { lines, summary };
}

/** P5 in a run without its memory drain: the WAL retention row only. */
export async function walRetainedSection(context: BenchContext): Promise<Section> {
  const { lines, summary } = await walRetained(context);
  return { id: 'P5', title: 'P5 (WAL) — WAL retained per 1,000 events while the broker is down', body: lines, summary };
}

async function writeEvents(dataSource: DataSource, publisher: OutboxPublisher, count: number, tag: string): Promise<void> {
  for (let i = 0; i < count; i++) {
    const event = { type: 'bench.parcel-registered', aggregateType: 'parcel', aggregateId: `${tag}-${i % 250}`, payload: { ...PAYLOAD, seq: i } };
    await dataSource.transaction((manager) => publisher.add(manager, [event]));
  }
}

async function saveParcels(dataSource: DataSource, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await dataSource.transaction((manager) => manager.save(BenchParcel.register(`parcel-${i}`, 100 + i)));
}

function brokers(command: 'kafka-down' | 'kafka-up', servicesDir: string): void {
  execFileSync('bash', ['scripts/services.sh', command], { cwd: REPO_ROOT, env: { ...process.env, OUTBOX_SERVICES_DIR: servicesDir }, stdio: ['ignore', 'ignore', 'inherit'] });
}

async function caughtUp(admin: Client, slotName: string, end: string): Promise<boolean> {
  return (await admin.query(`SELECT confirmed_flush_lsn >= $2::pg_lsn AS done FROM pg_replication_slots WHERE slot_name = $1`, [slotName, end])).rows[0]?.done === true;
}

async function rows(admin: Client, schema: string): Promise<number> {
  return Number((await admin.query(`SELECT count(*) AS n FROM ${schema}.outbox_messages`)).rows[0].n);
}

async function pending(admin: Client, schema: string): Promise<number> {
  return Number((await admin.query(`SELECT count(*) AS n FROM ${schema}.outbox_messages WHERE status NOT IN ('published', 'discarded')`)).rows[0].n);
}

if (require.main === module) {
  void walRetained({ services: benchServices(), sizes: QUICK, log: (message) => console.error(message) }).then(
    ({ lines, summary }) => (console.log([...lines, '', ...summary.map((row) => `${row.figure}: ${row.value}`)].join('\n')), process.exit(0)),
    (error: unknown) => (console.error(error), process.exit(1)),
  );
}
