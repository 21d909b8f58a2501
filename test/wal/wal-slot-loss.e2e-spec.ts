import { Client } from 'pg';
import { Registry } from 'prom-client';
import { OutboxConfigurationError } from '@nest-outbox/outbox';
import { OutboxWalHealthIndicator } from '@nest-outbox/outbox/observability';
import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import { PrivatePostgres } from '../support/private-postgres';
import { waitFor } from '../support/wait-for';
import { walSandbox, type WalApp, type WalSandbox } from '../support/wal.harness';

/** What a test app logged, by level. */
function capturingLogger(): { lines: Array<{ level: string; text: string }>; log(m: unknown): void; warn(m: unknown): void; error(m: unknown): void } {
  const lines: Array<{ level: string; text: string }> = [];
  return {
    lines,
    log: (m) => void lines.push({ level: 'log', text: String(m) }),
    warn: (m) => void lines.push({ level: 'warn', text: String(m) }),
    error: (m) => void lines.push({ level: 'error', text: String(m) }),
  };
}

interface Committed {
  id: string;
  aggregateId: string;
  seq: number;
}

/**
 * Writes one numbered event per transaction on 8 aggregates (`<aggregates>0` to 7), about 150 a second, until `stop()`;
 * `committed` holds the events whose transaction committed (a write that failed is not counted).
 */
function writeUnderLoad(app: WalApp, aggregates = 'p'): { committed: Committed[]; stop(): Promise<void> } {
  const committed: Committed[] = [];
  let stopped = false;
  const loop = (async () => {
    for (let seq = 0; !stopped; seq++) {
      const aggregateId = `${aggregates}${seq % 8}`;
      const event = { type: 'parcel.noted', aggregateType: 'parcel', aggregateId, payload: { seq }, topic: 'parcels' };
      const written = await app.dataSource.transaction((manager) => app.publisher.add(manager, event)).catch(() => undefined);
      if (written) committed.push({ id: written[0], aggregateId, seq });
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  return { committed, stop: async () => ((stopped = true), await loop) };
}

/** Every committed event published at least once, and per aggregate the first publications in commit order. */
async function expectAllPublishedInOrder(recording: RecordingOutboxTransport, committed: Committed[]): Promise<void> {
  const published = () => new Set(recording.published.map((m) => m.envelope.id));
  await waitFor(`all ${committed.length} committed events published`, () => committed.every((event) => published().has(event.id)), 60_000);
  const firstSeqs = new Map<string, number[]>();
  const seen = new Set<string>();
  for (const message of recording.published) {
    if (seen.has(message.envelope.id)) continue;
    seen.add(message.envelope.id);
    const seqs = firstSeqs.get(message.key!) ?? [];
    seqs.push((message.envelope.payload as { seq: number }).seq);
    firstSeqs.set(message.key!, seqs);
  }
  for (const [aggregate, seqs] of firstSeqs) expect({ aggregate, seqs }).toEqual({ aggregate, seqs: [...seqs].sort((a, b) => a - b) });
}

/** Ends the slot's WAL sender and drops the slot before the stream reconnects (it tries again after a second), as an operator might. */
async function dropSlotUnderReader(url: string, slotName: string): Promise<void> {
  const admin = new Client({ connectionString: url });
  await admin.connect();
  try {
    await waitFor(`slot "${slotName}" dropped`, async () => {
      await admin.query(`SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1 AND active_pid IS NOT NULL`, [slotName]);
      return admin.query(`SELECT pg_drop_replication_slot($1)`, [slotName]).then(() => true, () => false);
    }, 10_000);
  } finally {
    await admin.end();
  }
}

/** A PostgreSQL position (`16/B374D848`) as a number, to compare. */
function lsn(text: string): bigint {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

/**
 * Runs `work` with the server's max_slot_wal_keep_size at 1 MB (reset afterwards), passing an admin
 * client and a way to have the slot invalidated: WAL is switched, filled and checkpointed until the
 * server reports the slot lost; that resolves the moment it is visible.
 */
async function withSmallWalKeep(url: string, work: (admin: Client, invalidate: (slotName: string) => Promise<number>) => Promise<void>): Promise<void> {
  const admin = new Client({ connectionString: url });
  await admin.connect();
  const invalidate = async (slotName: string) => {
    await waitFor('the slot invalidated', async () => {
      await admin.query(`SELECT pg_switch_wal(), pg_logical_emit_message(false, 'filler', repeat('x', 600000))`);
      await admin.query('CHECKPOINT');
      const { rows } = await admin.query(`SELECT wal_status FROM pg_replication_slots WHERE slot_name = $1`, [slotName]);
      return rows[0]?.wal_status === 'lost';
    }, 30_000);
    return Date.now();
  };
  try {
    await admin.query(`ALTER SYSTEM SET max_slot_wal_keep_size = '1MB'`);
    await admin.query('SELECT pg_reload_conf()');
    await work(admin, invalidate);
  } finally {
    await admin.query('ALTER SYSTEM RESET max_slot_wal_keep_size').catch(() => undefined);
    await admin.query('SELECT pg_reload_conf()').catch(() => undefined);
    await admin.end();
  }
}

/**
 * A committed event lives in one slot's WAL only until the stream has it acknowledged; these are
 * the ways that slot goes (docs/wal-mode.md, "What survives what"), each on a server of its own.
 */
describe('WAL delivery mode: one slot per database, and what a lost slot costs', () => {
  let server: PrivatePostgres;
  const sandboxes: WalSandbox[] = [];
  const sandbox = async (prefix: string, database = 'postgres') => {
    const made = await walSandbox(prefix, server.url(database));
    sandboxes.push(made);
    return made;
  };

  beforeAll(async () => {
    server = await PrivatePostgres.start('wal-slot-loss');
    const admin = new Client({ connectionString: server.url() });
    await admin.connect();
    await admin.query('CREATE DATABASE shipping');
    await admin.query('CREATE DATABASE billing');
    await admin.end();
  }, 60_000);
  afterAll(async () => {
    for (const made of sandboxes) await made.drop().catch(() => undefined);
    await server?.cleanup();
  }, 60_000);

  it('two databases with default settings: the second start is refused naming both databases and wal.slotName; with a slot of its own it publishes', async () => {
    const shipping = await sandbox('dbs_shipping', 'shipping');
    const billing = await sandbox('dbs_billing', 'billing');
    const shippingEvents = new RecordingOutboxTransport();
    const first = await shipping.start({ transport: shippingEvents, wal: { slotName: undefined } });
    const refusal = await billing.start({ transport: new RecordingOutboxTransport(), wal: { slotName: undefined } }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(OutboxConfigurationError);
    expect(String(refusal)).toContain('the replication slot "outbox_outbox_messages" belongs to the database "shipping", not to "billing"');
    expect(String(refusal)).toContain("wal: { slotName: '<unique name>' }");

    const billingEvents = new RecordingOutboxTransport();
    const second = await billing.start({ transport: billingEvents });
    const load = [writeUnderLoad(first), writeUnderLoad(second)];
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const writer of load) await writer.stop();
    await expectAllPublishedInOrder(shippingEvents, load[0].committed);
    await expectAllPublishedInOrder(billingEvents, load[1].committed);
    await first.close();
    await second.close();
    await dropSlotUnderReader(server.url('shipping'), 'outbox_outbox_messages');
  }, 90_000);

  it("write 'row': the slot dropped under load loses nothing; the relaying instance makes a new one and says so", async () => {
    const rows = await sandbox('drop_rows');
    const recording = new RecordingOutboxTransport();
    const logger = capturingLogger();
    const registry = new Registry();
    const app = await rows.start({ transport: recording, pollIntervalMs: 200, metrics: { registry } }, { logger });
    const load = writeUnderLoad(app);
    await waitFor('events streamed', () => recording.published.length > 50, 30_000);
    await dropSlotUnderReader(rows.url, rows.slotName);
    // Counted in events written, not against what is published: how far the relays trail the writer
    // depends on the machine's load (it caught up and the gap never reached 100 under a load of 12).
    const incident = await waitFor('the new slot made', () => logger.lines.find((line) => line.text.includes('a new slot starts at')), 30_000);
    const writtenAtIncident = load.committed.length;
    await waitFor('events written after the new slot', () => load.committed.length >= writtenAtIncident + 50, 30_000);
    await load.stop();

    await expectAllPublishedInOrder(recording, load.committed);
    expect(incident).toEqual({
      level: 'warn',
      text: expect.stringMatching(new RegExp(`replication slot "${rows.slotName}" was gone after the stream had published up to [0-9A-F/]+; .* ([0-9]+) row\\(s\\) it had not published went to the table relay \\(wal.write 'row'\\): nothing is lost`)),
    });
    // Rows written while no slot existed went to the table relay.
    expect(Number(/ ([0-9]+) row\(s\) it had not published/.exec(incident.text)![1])).toBeGreaterThan(0);
    expect(logger.lines.filter((line) => line.text.includes('a new slot starts at'))).toHaveLength(1);
    expect(await registry.metrics()).toContain(`outbox_wal_slot_incidents_total{outbox="default",slot="${rows.slotName}",events="kept"} 1`);
    await app.close();
  }, 90_000);

  it("write 'message': the slot dropped under load is an incident: logged as an error with both positions, counted, health down", async () => {
    const messages = await sandbox('drop_messages');
    const logger = capturingLogger();
    const registry = new Registry();
    const recording = new RecordingOutboxTransport();
    const app = await messages.start({ transport: recording, wal: { write: 'message' }, metrics: { registry }, stats: { refreshIntervalMs: 1 } }, { logger });
    const load = writeUnderLoad(app);
    await waitFor('events streamed', () => recording.published.length > 50);
    await dropSlotUnderReader(messages.url, messages.slotName);
    const incident = await waitFor('the incident logged', () => logger.lines.find((line) => line.text.includes('a new slot starts at')));
    await load.stop();

    expect(incident).toEqual({ level: 'error', text: expect.stringMatching(/published up to [0-9A-F]+\/[0-9A-F]+; a new slot starts at [0-9A-F]+\/[0-9A-F]+\. Events committed between those positions .* may be lost/) });
    expect(await registry.metrics()).toContain(`outbox_wal_slot_incidents_total{outbox="default",slot="${messages.slotName}",events="may_be_lost"} 1`);
    const health = await app.module.get(OutboxWalHealthIndicator).isHealthy();
    expect(health['outbox-wal']).toMatchObject({ status: 'down', reason: expect.stringContaining('may be lost') });
    // What was written after the new slot was made streams again.
    const after = await app.dataSource.transaction((manager) => app.publisher.add(manager, { type: 'parcel.noted', aggregateType: 'parcel', aggregateId: 'after', payload: { seq: 0 }, topic: 'parcels' }));
    await waitFor('an event written after the incident published', () => recording.published.some((m) => m.envelope.id === after[0]));
    await app.close();
  }, 90_000);

  it("write 'message': while no slot exists, saves write rows within a second; the next relay makes the slot and publishes them", async () => {
    const fallback = await sandbox('fallback_messages');
    const recording = new RecordingOutboxTransport();
    // A stream that published saves its position: the slot made later is one made over it (an incident).
    const first = await fallback.start({ transport: recording, wal: { write: 'message' } });
    const before = writeUnderLoad(first, 'b');
    await waitFor('events streamed', () => recording.published.length >= 10);
    await before.stop();
    await expectAllPublishedInOrder(recording, before.committed);
    await first.close();
    const logger = capturingLogger();
    const writer = await fallback.start({ relay: false, wal: { write: 'message' } }, { logger });
    const dropped = Date.now();
    await dropSlotUnderReader(fallback.url, fallback.slotName);
    const switched = await waitFor('the writer to switch to rows', () => logger.lines.find((line) => line.text.includes('saves write their events as rows')), 5_000);
    expect(Date.now() - dropped).toBeLessThan(1_500);
    expect(switched.level).toBe('warn');
    const load = writeUnderLoad(writer);
    await waitFor('events written', () => load.committed.length >= 50);
    await load.stop();
    expect(Number((await writer.dataSource.query(`SELECT count(*) AS n FROM outbox_messages`))[0].n)).toBe(load.committed.length);

    const relayLogger = capturingLogger();
    const relay = await fallback.start({ transport: recording, pollIntervalMs: 200, wal: { write: 'message' } }, { logger: relayLogger });
    await expectAllPublishedInOrder(recording, load.committed);
    expect(relayLogger.lines.some((line) => line.level === 'error' && line.text.includes('a new slot starts at'))).toBe(true);
    // Nest's loggers are the process's: the writer's line goes to the logger of the app started last.
    await waitFor('the writer to write messages again', () => [...logger.lines, ...relayLogger.lines].some((line) => line.text.includes('saves write WAL messages again')), 5_000);
    await relay.close();
    await writer.close();
  }, 90_000);

  it("write 'row': a slot invalidated by max_slot_wal_keep_size while no instance relays loses nothing; the next relay makes it anew", async () => {
    const invalidated = await sandbox('invalidated_rows');
    await withSmallWalKeep(invalidated.url, async (_admin, invalidate) => {
      const recording = new RecordingOutboxTransport();
      const relay = await invalidated.start({ transport: recording });
      const before = writeUnderLoad(relay);
      await waitFor('events streamed', () => recording.published.length > 20);
      await before.stop();
      await expectAllPublishedInOrder(recording, before.committed);
      await relay.close();

      // A write-only instance goes on while nobody relays; the server recycles WAL past 1 MB and invalidates the slot.
      const writer = await invalidated.start({ relay: false });
      const during = writeUnderLoad(writer, 'q');
      await invalidate(invalidated.slotName);
      await during.stop();
      expect(during.committed.length).toBeGreaterThan(0);

      const logger = capturingLogger();
      const next = await invalidated.start({ transport: recording, pollIntervalMs: 200 }, { logger });
      await expectAllPublishedInOrder(recording, [...before.committed, ...during.committed]);
      expect(logger.lines.some((line) => line.level === 'warn' && line.text.includes(`"${invalidated.slotName}" was invalidated by the server`))).toBe(true);
      await next.close();
      await writer.close();
    });
  }, 120_000);

  it("write 'message': a slot invalidated while no instance relays: saves write rows within a second, the next relay reports the incident and publishes every event saved since", async () => {
    const invalidated = await sandbox('invalidated_messages');
    await withSmallWalKeep(invalidated.url, async (admin, invalidate) => {
      const recording = new RecordingOutboxTransport();
      const relay = await invalidated.start({ transport: recording, wal: { write: 'message' } });
      const before = writeUnderLoad(relay);
      await waitFor('events streamed', () => recording.published.length > 20);
      await before.stop();
      await expectAllPublishedInOrder(recording, before.committed);
      await relay.close();

      // Nobody relays: the write-only instance's messages stay in WAL that the server recycles past 1 MB, invalidating the slot.
      const logger = capturingLogger();
      const writer = await invalidated.start({ relay: false, wal: { write: 'message' } }, { logger });
      const firstMessageAfter = lsn((await admin.query('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn);
      const during = writeUnderLoad(writer, 'q');
      const invalidatedAt = await invalidate(invalidated.slotName);
      const switched = await waitFor('the writer to switch to rows', () => logger.lines.find((line) => line.text.includes('saves write their events as rows')), 5_000);
      expect(Date.now() - invalidatedAt).toBeLessThan(1_500);
      expect(switched).toEqual({ level: 'warn', text: expect.stringContaining(`"${invalidated.slotName}" was invalidated by the server`) });
      await during.stop();
      const lastMessageBefore = lsn((await admin.query('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn);
      // Every save from now on writes a row.
      const after = writeUnderLoad(writer, 'r');
      await waitFor('events written as rows', () => after.committed.length >= 50);
      await after.stop();
      const rows = new Set<string>((await writer.dataSource.query(`SELECT id::text AS id FROM outbox_messages`)).map((row: { id: string }) => row.id));
      expect(after.committed.filter((event) => !rows.has(event.id))).toEqual([]);
      const duringAsRows = during.committed.filter((event) => rows.has(event.id));

      const relayLogger = capturingLogger();
      const registry = new Registry();
      const next = await invalidated.start({ transport: recording, pollIntervalMs: 200, wal: { write: 'message' }, metrics: { registry }, stats: { refreshIntervalMs: 1 } }, { logger: relayLogger });
      await expectAllPublishedInOrder(recording, [...duringAsRows, ...after.committed]);
      // The messages saved before the switch were in the invalidated slot only: the incident names the positions around them.
      const incidents = relayLogger.lines.filter((line) => line.text.includes('a new slot starts at'));
      expect(incidents).toEqual([{ level: 'error', text: expect.stringMatching(/was invalidated by the server \(wal_status lost\) after the stream had published up to [0-9A-F]+\/[0-9A-F]+; a new slot starts at [0-9A-F]+\/[0-9A-F]+\. .* may be lost/) }]);
      const [, formerPosition, startsAt] = /published up to ([0-9A-F]+\/[0-9A-F]+); a new slot starts at ([0-9A-F]+\/[0-9A-F]+)/.exec(incidents[0].text)!;
      expect(lsn(formerPosition)).toBeLessThanOrEqual(firstMessageAfter);
      expect(lsn(startsAt)).toBeGreaterThanOrEqual(lastMessageBefore);
      expect(await registry.metrics()).toContain(`outbox_wal_slot_incidents_total{outbox="default",slot="${invalidated.slotName}",events="may_be_lost"} 1`);
      const health = await next.module.get(OutboxWalHealthIndicator).isHealthy();
      expect(health['outbox-wal']).toMatchObject({ status: 'down', reason: expect.stringContaining('may be lost') });
      // Exactly the events saved as rows arrived of what the writer saved: what it wrote as messages before the switch did not.
      const writerIds = new Set([...during.committed, ...after.committed].map((event) => event.id));
      const arrived = new Set(recording.published.map((m) => m.envelope.id).filter((id) => writerIds.has(id)));
      expect([...arrived].sort()).toEqual([...duringAsRows, ...after.committed].map((event) => event.id).sort());
      await next.close();
      await writer.close();
    });
  }, 120_000);
});
