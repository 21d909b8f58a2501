import request from 'supertest';
import type { OutgoingMessage } from '@nest-outbox/outbox/core';
import { OutboxAdmin } from '@nest-outbox/outbox';
import { OutboxReplay } from '../../libs/outbox/src/core/replay/outbox-replay';
import { createSqlReplayStore } from '../../libs/outbox/src/sql/outbox-sql.factory';
import { sqlConnectionOf } from '../../libs/outbox/src/typeorm/typeorm-sql.connection';
import type { TestDatabase } from '../support/outbox-harness';
import { createConsoleHarness, OPERATOR_TOKEN, type ConsoleHarness } from '../support/console.harness';
import { RecordingTransport } from '../support/recording.transport';
import { waitFor } from '../support/wait-for';

const auth = { Authorization: `Bearer ${OPERATOR_TOKEN}` };

/** "now + 1 hour" in the type of the database's timestamp columns. */
const LATER: Record<TestDatabase, string> = {
  postgres: `now() + interval '1 hour'`,
  sqlite: `strftime('%Y-%m-%d %H:%M:%f', 'now', '+1 hour')`,
  mariadb: 'NOW(3) + INTERVAL 1 HOUR',
};

/**
 * The replay of published messages on one database, through HTTP and the store's own statements:
 * which rows a filter takes, the reason on them, and the order in which the relay sends them again
 * next to newer rows of the same aggregate (waiting, or in flight).
 */
export function consoleReplayContract(database: TestDatabase): void {
  let h: ConsoleHarness;
  let transport: RecordingTransport;

  beforeEach(async () => {
    h = await createConsoleHarness(database);
    transport = new RecordingTransport();
  });
  afterEach(() => h.close());

  const post = (path: string, body: object = {}) => request(h.app.getHttpServer()).post(`/outbox/api/${path}`).set(auth).send(body);
  const get = (path: string) => request(h.app.getHttpServer()).get(`/outbox/api/${path}`).set(auth);
  const p = (index: number) => (database === 'postgres' ? `$${index}` : '?');
  const event = (aggregateId: string, n: number, topic?: string) => ({ type: `orders.step-${n}`, aggregateType: 'order', aggregateId, payload: { n }, topic });
  const ids = (messages: OutgoingMessage[]) => messages.map((m) => m.envelope.id);
  const publishAll = async (owner: string) => {
    const relay = h.relay(owner, transport);
    while ((await relay.publishBatch()).claimed > 0);
  };

  it('re-publishes the messages of an aggregate by filter, with their ids, in their original order, before newer waiting rows', async () => {
    const first = await h.add([event('o-1', 1), event('o-2', 1), event('o-1', 2), event('o-1', 3, 'audit')]);
    await publishAll('first');
    expect(ids(transport.delivered).sort()).toEqual([...first].sort());
    // Written after the first publish and still waiting when the replay starts: it must go out after the replayed rows.
    const [newer] = await h.add([event('o-1', 4)]);
    transport.delivered.length = 0;

    const dry = await post('bulk/replay', { aggregateType: 'order', aggregateId: 'o-1', destination: 'orders', reason: 'shipping lost its database', dryRun: true }).expect(200);
    expect(dry.body).toMatchObject({ matched: 2, replayed: 0, dryRun: true });
    const done = await post('bulk/replay', { aggregateType: 'order', aggregateId: 'o-1', destination: 'orders', reason: 'shipping lost its database', dryRun: false }).expect(200);
    expect(done.body).toMatchObject({ matched: 2, replayed: 2, waiting: 0, dryRun: false });

    await publishAll('after');
    expect(ids(transport.delivered)).toEqual([first[0], first[2], newer]);
    const replayed = transport.delivered[0].headers;
    expect(replayed).toMatchObject({
      'outbox-replay-reason': 'shipping lost its database',
      'outbox-replayed-by': 'console',
      'outbox-replay-id': done.body.replayId,
      'outbox-replayed-at': done.body.replayedAt,
    });
    expect(transport.delivered[2].headers['outbox-replay-reason']).toBeUndefined();
    const detail = (await get(`messages/${first[0]}`).expect(200)).body;
    expect(detail).toMatchObject({ status: 'published', headers: { 'outbox-replay-reason': 'shipping lost its database' } });
  });

  it('replays one message from its id, and says why another cannot be (404, 409); refuses a replay without a reason or a filter', async () => {
    const [one, dead] = await h.add([event('o-5', 1), event('o-6', 1)]);
    transport.failTimes(dead, 1);
    await h.relay('first', transport, 1).publishBatch();
    await post(`messages/${one}/replay`, { reason: 'partner asked again' }).expect(200);
    expect((await get(`messages/${one}`).expect(200)).body).toMatchObject({ status: 'pending', attempts: 0, publishedAt: null });

    expect((await post(`messages/${dead}/replay`, { reason: 'x' }).expect(409)).body.message).toContain('is dead, not published');
    await post('messages/7d0e3f4a-1111-4222-8333-944455556666/replay', { reason: 'x' }).expect(404);
    expect((await post(`messages/${one}/replay`, { reason: '   ' }).expect(400)).body).toMatchObject({ field: 'reason' });
    expect((await post('bulk/replay', { reason: 'lost', dryRun: true }).expect(400)).body).toMatchObject({ field: 'filter' });
    expect((await post('bulk/replay', { reason: 'lost', dryRun: true, status: 'dead', type: 'x' }).expect(400)).body).toMatchObject({ field: 'status' });
    // Without a reason at all: the answer says it is required, not that it is too long.
    const required = /^reason is required: a text of at most 500 characters \(it is undefined, not a string\)\./;
    expect((await post('bulk/replay', { dryRun: true, type: 'x' }).expect(400)).body.message).toEqual([expect.stringMatching(required)]);
    expect((await post(`messages/${one}/replay`, {}).expect(400)).body.message).toEqual([expect.stringMatching(required)]);
    expect((await post(`messages/${one}/replay`, { reason: 'x'.repeat(501) }).expect(400)).body.message).toEqual([expect.stringMatching(/\(it has 501 characters, more than 500\)/)]);

    // The same from code, through OutboxAdmin: its refusals are OutboxAdminErrors.
    const admin = h.app.get(OutboxAdmin);
    await expect(admin.replay({ filter: { id: one }, reason: 'from code', dryRun: true })).rejects.toMatchObject({ reason: 'conflict', message: expect.stringContaining('is pending, not published') });
    await expect(admin.replay({ filter: { id: dead }, reason: 'from code' })).rejects.toMatchObject({ name: 'OutboxAdminError', reason: 'conflict' });
    await expect(admin.replay({ filter: {}, reason: 'from code' })).rejects.toMatchObject({ name: 'OutboxAdminError', reason: 'invalid' });
  });

  it('takes a time range by insert time, and everything only when confirmed with "all"', async () => {
    const [old, recent] = await h.add([event('t-1', 1), event('t-2', 1)]);
    await publishAll('first');
    const time = database === 'postgres' ? `'2026-01-10T00:00:00Z'::timestamptz` : `'2026-01-10 00:00:00.000'`;
    await h.dataSource.query(`UPDATE outbox_messages SET created_at = ${time} WHERE id = ${p(1)}`, [old]);
    const range = { from: '2026-01-09T00:00:00Z', to: '2026-01-11T00:00:00Z', reason: 'lost in January', dryRun: false };
    expect((await post('bulk/replay', range).expect(200)).body).toMatchObject({ matched: 1, replayed: 1 });
    expect((await get(`messages/${recent}`).expect(200)).body.status).toBe('published');
    expect((await post('bulk/replay', { reason: 'everything', dryRun: true, all: true }).expect(200)).body).toMatchObject({ matched: 1 });
  });

  it('keeps replayed rows behind a newer row of their aggregate that a relay has in flight, and sends them after it', async () => {
    const first = await h.add([event('f-1', 1), event('f-1', 2)]);
    await publishAll('first');
    const [inFlight] = await h.add([event('f-1', 3)]);
    // As a relay leaves a row it claimed and is publishing: leased for an hour.
    await h.dataSource.query(`UPDATE outbox_messages SET lease_owner = 'other-relay', lease_token = 'x', lease_expires_at = ${LATER[database]} WHERE id = ${p(1)}`, [inFlight]);
    transport.delivered.length = 0;

    const replay = new OutboxReplay(createSqlReplayStore(sqlConnectionOf(h.dataSource), 'outbox_messages'), { holdMs: 60_000, releaseWaitMs: 5_000, releasePollMs: 50 });
    const replaying = replay.replay({ filter: { aggregateId: 'f-1' }, reason: 'lost', by: 'test' });
    // While the in-flight row is out, nothing of the aggregate goes: the held rows wait behind it.
    const held = async () => Number((await h.dataSource.query(`SELECT count(*) AS n FROM outbox_messages WHERE lease_owner LIKE 'replay:%'`))[0].n);
    await waitFor('the replay to hold both rows', async () => (await held()) === 2, 5_000);
    expect((await h.relay('meanwhile', transport).publishBatch()).claimed).toBe(0);
    // The other relay publishes it: the replay releases its rows, which now go out in order.
    await h.dataSource.query(
      `UPDATE outbox_messages SET status = 'published', lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL WHERE id = ${p(1)}`,
      [inFlight],
    );
    expect(await replaying).toMatchObject({ replayed: 2, waiting: 0 });
    await publishAll('after');
    expect(ids(transport.delivered)).toEqual(first);
  });
}
