import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DeliveryMode, TestDatabase } from '../support/outbox-harness';
import { createConsoleHarness, OPERATOR_TOKEN, type ConsoleHarness } from '../support/console.harness';
import { RecordingTransport } from '../support/recording.transport';

const auth = { Authorization: `Bearer ${OPERATOR_TOKEN}` };

/**
 * The console's REST admin on one database: every test on its own database, through HTTP only,
 * except where it checks what the rows became. In the WAL mode (PostgreSQL) the app is a WAL-mode
 * instance and the rows are those its stream moved to the table; every case applies there.
 */
export function consoleRestContract(database: TestDatabase, mode: DeliveryMode = 'table'): void {
  let h: ConsoleHarness;
  let queries: string[];

  beforeEach(async () => {
    queries = [];
    h = await createConsoleHarness(database, undefined, (sql) => queries.push(sql), { delivery: mode });
  });
  afterEach(() => h.close());

  const get = (path: string) => request(h.app.getHttpServer()).get(`/outbox/api/${path}`).set(auth);
  const post = (path: string, body: object = {}) => request(h.app.getHttpServer()).post(`/outbox/api/${path}`).set(auth).send(body);
  const statusOf = async (id: string) =>
    (await h.dataSource.query(`SELECT status FROM outbox_messages WHERE id = ${database === 'postgres' ? '$1' : '?'}`, [id]))[0]?.status;
  const countByStatus = async () => {
    const rows: Array<{ status: string; n: string | number }> = await h.dataSource.query(`SELECT status, count(*) AS n FROM outbox_messages GROUP BY status`);
    return Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
  };

  const order = (aggregateId: string, type = 'orders.order-placed', topic?: string) => ({
    type,
    aggregateType: 'order',
    aggregateId,
    payload: { aggregateId, email: `${aggregateId}@example.com` },
    topic,
  });

  /** 3 published, 2 dead (with a real error history), 2 pending on `invoices`. */
  async function seedMixed(): Promise<{ published: string[]; dead: string[]; pending: string[] }> {
    const published = await h.add([order('o-1'), order('o-2'), order('o-3', 'orders.order-shipped')]);
    const dead = await h.add([order('o-4', 'orders.order-cancelled'), order('o-5', 'orders.order-cancelled')]);
    const transport = new RecordingTransport();
    for (const id of dead) transport.failTimes(id, 10);
    const relay = h.relay('seed', transport, 2);
    // Two rounds: every attempt of the failing ones, with a retry between.
    await relay.publishBatch();
    await waitForDead(dead.length, () => relay.publishBatch());
    // Its retry wake-up must not pick up what the test adds or requeues next.
    await relay.stop(5_000);
    const pending = await h.add([order('o-6', 'invoices.invoice-issued', 'invoices'), order('o-7', 'invoices.invoice-issued', 'invoices')]);
    return { published, dead, pending };
  }

  async function waitForDead(count: number, round: () => Promise<unknown>): Promise<void> {
    const deadline = Date.now() + 20_000;
    while ((await countByStatus()).dead !== count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} dead rows, have ${JSON.stringify(await countByStatus())}`);
      await round();
    }
  }

  it('summarizes counts, throughput and paused destinations', async () => {
    await seedMixed();
    const { body } = await get('summary').expect(200);
    expect(body.stats).toMatchObject({ pending: 2, dead: 2, publishedLastHour: 3 });
    expect(body.stats.destinations.map((d: { destination: string }) => d.destination).sort()).toEqual(['invoices', 'orders']);
    expect(body.throughput.reduce((sum: number, point: { published: number }) => sum + point.published, 0)).toBe(3);
    expect(body.paused).toEqual([]);
    expect(body.readOnly).toBe(false);
    // The WAL mode's stats carry its slot (no instance streams it here).
    if (mode === 'wal') expect(body.stats.wal).toMatchObject({ slot: expect.stringMatching(/_slot$/), active: false });
    else expect(body.stats.wal).toBeUndefined();
  });

  it('filters messages by status, type, aggregate, destination, id and time', async () => {
    const { dead, pending, published } = await seedMixed();
    const ids = async (query: string) => (await get(`messages?${query}`).expect(200)).body.messages.map((m: { id: string }) => m.id).sort();
    expect(await ids('status=dead')).toEqual([...dead].sort());
    expect(await ids('type=orders.order-shipped')).toEqual([published[2]]);
    expect(await ids('aggregateType=order&aggregateId=o-4')).toEqual([dead[0]]);
    expect(await ids('destination=invoices')).toEqual([...pending].sort());
    expect(await ids(`id=${published[1]}`)).toEqual([published[1]]);
    expect(await ids('status=dead&destination=invoices')).toEqual([]);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(await ids(`from=${encodeURIComponent(future)}`)).toEqual([]);
    expect((await ids(`to=${encodeURIComponent(future)}`)).length).toBe(7);
  });

  it('pages newest first with a keyset cursor, without gaps or repeats', async () => {
    const ids = await h.add(Array.from({ length: 7 }, (_, i) => order(`p-${i}`)));
    const seen: string[] = [];
    let before: string | null = null;
    const sizes: number[] = [];
    do {
      const query: string = `limit=3${before ? `&before=${before}` : ''}`;
      const { body } = await get(`messages?${query}`).expect(200);
      sizes.push(body.messages.length);
      seen.push(...body.messages.map((m: { id: string }) => m.id));
      before = body.next;
    } while (before);
    expect(sizes).toEqual([3, 3, 1]);
    expect(seen).toEqual([...ids].reverse());
  });

  it('shows one message in full with its error history, payload redacted by the hook when set', async () => {
    const { dead } = await seedMixed();
    const { body } = await get(`messages/${dead[0]}`).expect(200);
    expect(body).toMatchObject({ id: dead[0], status: 'dead', type: 'orders.order-cancelled', aggregateId: 'o-4', destination: 'orders', attempts: 2 });
    expect(body.errors).toHaveLength(2);
    expect(body.errors[0].error).toContain(`refused ${dead[0]}`);
    expect(body.payload).toEqual({ aggregateId: 'o-4', email: 'o-4@example.com' });
    expect(typeof body.headers).toBe('object');
    await get(`messages/${randomUUID()}`).expect(404);
  });

  it('requeues and discards one dead message; the requeued one is published by a relay', async () => {
    const { dead, published } = await seedMixed();
    expect((await get('summary').expect(200)).body.stats.dead).toBe(2);
    await post(`messages/${dead[0]}/requeue`).expect(200, { id: dead[0], status: 'pending' });
    await post(`messages/${dead[1]}/discard`).expect(200, { id: dead[1], status: 'discarded' });
    expect(await statusOf(dead[0])).toBe('pending');
    expect(await statusOf(dead[1])).toBe('discarded');
    const transport = new RecordingTransport();
    await h.relay('after-requeue', transport).publishBatch();
    expect(transport.delivered.map((m) => m.envelope.id)).toContain(dead[0]);
    expect(await statusOf(dead[0])).toBe('published');
    // The cached stats snapshot is shared by every caller; fresh=true reads the table now.
    expect((await get('summary?fresh=true').expect(200)).body.stats).toMatchObject({ dead: 0, pending: 0, publishedLastHour: 6 });
    // Not dead any more, or never existed: nothing changes.
    const conflict = await post(`messages/${published[0]}/requeue`).expect(409);
    expect(conflict.body.message).toContain('published');
    await post(`messages/${randomUUID()}/discard`).expect(404);
  });

  it('requeues 1,000 dead rows by filter in bounded statements, after a dry run that changes nothing', async () => {
    const ids = await h.add(Array.from({ length: 1_000 }, (_, i) => order(`bulk-${i}`, 'orders.order-bulk')));
    await h.add([order('other-1', 'orders.order-other')]);
    await h.dataSource.query(
      `UPDATE outbox_messages SET status = 'dead', attempts = 5, last_error = 'partner down', dead_at = created_at, error_history = '[]'`,
    );
    const dry = await post('bulk/requeue', { type: 'orders.order-bulk', dryRun: true }).expect(200);
    expect(dry.body).toEqual({ matched: 1_000, changed: 0, dryRun: true });
    expect(await countByStatus()).toEqual({ dead: 1_001 });
    queries.length = 0;
    const done = await post('bulk/requeue', { type: 'orders.order-bulk', dryRun: false }).expect(200);
    expect(done.body).toEqual({ matched: 1_000, changed: 1_000, dryRun: false });
    expect(await countByStatus()).toEqual({ pending: 1_000, dead: 1 });
    // 200 rows per statement: 5 full batches and the one that finds nothing more (SQLite's statements
    // bypass TypeORM's logger). MariaDB locks each batch before changing it.
    if (database === 'postgres') expect(queries.filter((sql) => sql.includes("SET status = 'pending', attempts = 0")).length).toBe(6);
    if (database === 'mariadb') expect(queries.filter((sql) => sql.includes('FOR UPDATE SKIP LOCKED')).length).toBe(6);
    expect(await statusOf(ids[999])).toBe('pending');
    const discard = await post('bulk/discard', { aggregateId: 'other-1', dryRun: false }).expect(200);
    expect(discard.body).toEqual({ matched: 1, changed: 1, dryRun: false });
  });

  it('pauses a destination for every relay until resumed', async () => {
    // No row has used "invoices" yet: the pause must be confirmed.
    await post('destinations/pause', { destination: 'invoices', confirmUnknown: true }).expect(200, { destination: 'invoices', paused: true, changed: true });
    const [invoice] = await h.add([order('i-1', 'invoices.invoice-issued', 'invoices')]);
    const [ordered] = await h.add([order('o-1')]);
    const other = new RecordingTransport();
    await h.relay('second-relay', other).publishBatch();
    expect(other.delivered.map((m) => m.envelope.id)).toEqual([ordered]);
    expect(await statusOf(invoice)).toBe('pending');
    expect((await get('summary').expect(200)).body.paused.map((p: { destination: string }) => p.destination)).toEqual(['invoices']);
    await post('destinations/resume', { destination: 'invoices' }).expect(200, { destination: 'invoices', paused: false, changed: true });
    await h.relay('third-relay', other).publishBatch();
    expect(other.delivered.map((m) => m.envelope.id)).toEqual([ordered, invoice]);
    expect((await get('destinations/paused').expect(200)).body).toEqual([]);
  });

  it('answers bad input with 400 naming the field, and changes nothing', async () => {
    const { dead } = await seedMixed();
    const before = await countByStatus();
    const message = async (response: Promise<request.Response>) => JSON.stringify((await response).body.message);
    expect(await message(get('messages?limit=5000').expect(400))).toContain('limit');
    expect(await message(get('messages?limit=abc').expect(400))).toContain('limit');
    expect(await message(get('messages?status=lost').expect(400))).toContain('status');
    expect(await message(get('messages?from=yesterday').expect(400))).toContain('from');
    expect(await message(get('messages?before=abc').expect(400))).toContain('before');
    expect(await message(get('messages?colour=red').expect(400))).toContain('colour');
    expect(await message(get('summary?fresh=maybe').expect(400))).toContain('fresh');
    expect(await message(get('messages/not-an-id').expect(400))).toContain('id');
    expect(await message(post('messages/not-an-id/requeue').expect(400))).toContain('id');
    expect(await message(post('bulk/requeue', { dryRun: false }).expect(400))).toContain('filter');
    expect(await message(post('bulk/discard', { status: 'published', type: 'x', dryRun: false }).expect(400))).toContain('status');
    expect(await message(post('bulk/requeue', { type: 'orders.order-cancelled' }).expect(400))).toContain('dryRun');
    expect(await message(post('bulk/requeue', { type: 'orders.order-cancelled', dryRun: 'yes' }).expect(400))).toContain('dryRun');
    expect(await message(post('destinations/pause', { destination: '' }).expect(400))).toContain('destination');
    expect(await countByStatus()).toEqual(before);
    expect(await statusOf(dead[0])).toBe('dead');
    expect((await get('destinations/paused').expect(200)).body).toEqual([]);
  });
}
