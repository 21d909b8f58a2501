import request from 'supertest';
import type { TestDatabase } from '../support/outbox-harness';
import { createConsoleHarness, OPERATOR_TOKEN, type ConsoleHarness } from '../support/console.harness';

const auth = { Authorization: `Bearer ${OPERATOR_TOKEN}` };
const json = { ...auth, 'Content-Type': 'application/json' };

type Case = [what: string, method: 'GET' | 'POST', path: string, body: unknown, status: number, mentions: string];

const id = '00000000-0000-4000-8000-000000000000';
const nul = '%00';

/** Hostile or malformed input to every field of every console route: each answered 4xx with a message that names the field. */
const BAD: Case[] = [
  ...['type', 'aggregateType', 'aggregateId', 'destination'].flatMap((field): Case[] => [
    [`a NUL in ${field}`, 'GET', `messages?${field}=a${nul}b`, undefined, 400, field],
    [`two values of ${field}`, 'GET', `messages?${field}=a&${field}=b`, undefined, 400, field],
    [`an over-long ${field}`, 'GET', `messages?${field}=${'x'.repeat(256)}`, undefined, 400, field],
  ]),
  ['a NUL in the id filter', 'GET', `messages?id=${nul}`, undefined, 400, 'id'],
  ['a before cursor past bigint', 'GET', 'messages?before=9223372036854775808', undefined, 400, 'before'],
  ['a 20-digit before cursor', 'GET', 'messages?before=99999999999999999999', undefined, 400, 'before'],
  ['a negative before cursor', 'GET', 'messages?before=-1', undefined, 400, 'before'],
  ['a NUL before cursor', 'GET', `messages?before=${nul}`, undefined, 400, 'before'],
  ['an ISO week date Date cannot read', 'GET', 'messages?from=2026-W01', undefined, 400, 'from'],
  ['a basic-format date Date cannot read', 'GET', 'messages?to=20260101', undefined, 400, 'to'],
  ['February 30th', 'GET', 'messages?from=2026-02-30', undefined, 400, 'from'],
  ['year 0', 'GET', 'messages?from=0000-01-01', undefined, 400, 'from'],
  ['a NUL in a time', 'GET', `messages?to=2026-01-01${nul}`, undefined, 400, 'to'],
  ['limit 0', 'GET', 'messages?limit=0', undefined, 400, 'limit'],
  ['a limit past 2^64', 'GET', 'messages?limit=99999999999999999999', undefined, 400, 'limit'],
  ['a fractional limit', 'GET', 'messages?limit=1.5', undefined, 400, 'limit'],
  ['an unknown status', 'GET', 'messages?status=retrying', undefined, 400, 'status'],
  ['a bad retrying flag', 'GET', 'messages?retrying=yes', undefined, 400, 'retrying'],
  ['an unknown query field', 'GET', 'messages?colour=red', undefined, 400, 'colour'],
  ['a NUL in fresh', 'GET', `summary?fresh=${nul}`, undefined, 400, 'fresh'],
  ['a NUL as message id', 'GET', `messages/${nul}`, undefined, 400, 'id'],
  ['an unknown message', 'GET', `messages/${id}`, undefined, 404, id],
  ...['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '..%2Fconsole.js', nul, 'index.html'].map(
    (name): Case => [`the asset name ${name}`, 'GET', `/outbox/assets/${name}`, undefined, 404, 'No console asset'],
  ),
  ['a NUL in a paused destination', 'POST', 'destinations/pause', { destination: 'a\u0000b', confirmUnknown: true }, 400, 'destination'],
  ['an unpaired surrogate in a destination', 'POST', 'destinations/pause', { destination: 'a\ud800', confirmUnknown: true }, 400, 'destination'],
  ['a NUL in a pause reason', 'POST', 'destinations/pause', { destination: 'orders', reason: 'x\u0000' }, 400, 'reason'],
  ['an over-long pause reason', 'POST', 'destinations/pause', { destination: 'orders', reason: 'x'.repeat(501) }, 400, 'reason'],
  ['a non-boolean confirmation', 'POST', 'destinations/pause', { destination: 'orders', confirmUnknown: 'yes' }, 400, 'confirmUnknown'],
  ['an unknown destination, unconfirmed', 'POST', 'destinations/pause', { destination: 'ordres' }, 400, 'confirmUnknown'],
  ['a destination that is an array', 'POST', 'destinations/pause', { destination: ['orders'] }, 400, 'destination'],
  ['a destination that is an object', 'POST', 'destinations/pause', { destination: { $ne: null } }, 400, 'destination'],
  ['no destination', 'POST', 'destinations/pause', {}, 400, 'destination'],
  ['a NUL in a resumed destination', 'POST', 'destinations/resume', { destination: '\u0000' }, 400, 'destination'],
  ['a NUL in a bulk filter', 'POST', 'bulk/requeue', { type: 'a\u0000', dryRun: true }, 400, 'type'],
  ['a NUL in a retry-now filter', 'POST', 'bulk/retry-now', { destination: '\u0000', dryRun: true }, 400, 'destination'],
  ['an unreadable time in a bulk filter', 'POST', 'bulk/discard', { from: '2026-W01', dryRun: true }, 400, 'from'],
  ['retry now without a filter', 'POST', 'bulk/retry-now', { dryRun: false }, 400, 'filter'],
  ['retry now on dead rows', 'POST', 'bulk/retry-now', { status: 'dead', type: 'x', dryRun: true }, 400, 'status'],
  ['retry now of an unknown message', 'POST', `messages/${id}/retry-now`, {}, 404, id],
  ['retry now of a NUL id', 'POST', `messages/${nul}/retry-now`, {}, 400, 'id'],
  ['a body that is not JSON', 'POST', 'destinations/pause', '{"destination":', 400, 'JSON'],
  ['a JSON array as body', 'POST', 'bulk/requeue', [], 400, 'dryRun'],
];

/** Odd but valid input: answered 200, never a database error. */
const ODD: Array<[what: string, path: string]> = [
  ['the largest before cursor', 'messages?before=9223372036854775807'],
  ['an emoji destination', `messages?destination=${encodeURIComponent('orders-😀')}`],
  ['a 255-character aggregate id', `messages?aggregateId=${'é'.repeat(255)}`],
  ['percent-escapes that are not UTF-8', 'messages?type=%ED%A0%80'],
  ['year 9999', 'messages?to=9999-12-31T23:59:59Z'],
  ['__proto__ and constructor query fields (dropped by the query parser)', 'messages?__proto__=x&constructor=y'],
];

/** Hostile input to the console on one database: every answer 4xx and useful, nothing changed. */
export function consoleHostileInputContract(database: TestDatabase): void {
  let h: ConsoleHarness;
  let seeded: string;
  beforeAll(async () => {
    h = await createConsoleHarness(database);
    [seeded] = await h.add([{ type: 'orders.order-placed', aggregateType: 'order', aggregateId: 'o-1', payload: {} }]);
  });
  afterAll(() => h.close());

  const send = (method: 'GET' | 'POST', path: string, body: unknown) => {
    const url = path.startsWith('/') ? path : `/outbox/api/${path}`;
    if (method === 'GET') return request(h.app.getHttpServer()).get(url).set(auth);
    return request(h.app.getHttpServer()).post(url).set(json).send(body as object);
  };

  it.each(BAD)('%s → 4xx naming the field', async (_what, method, path, body, status, mentions) => {
    const response = await send(method, path, body);
    expect({ status: response.status, message: JSON.stringify(response.body?.message ?? response.text) }).toEqual({
      status,
      message: expect.stringContaining(mentions),
    });
  });

  it.each(ODD)('%s → 200', async (_what, path) => {
    const response = await send('GET', path, undefined);
    expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: expect.objectContaining({ messages: expect.any(Array) }) });
  });

  it('shows a row whose headers and error history were overwritten by hand with text that is not JSON', async () => {
    const [id] = await h.add([{ type: 'orders.order-placed', aggregateType: 'order', aggregateId: 'o-2', payload: {} }]);
    const p = database === 'postgres' ? ['$1', '$2', '$3'] : ['?', '?', '?'];
    await h.dataSource.query(`UPDATE outbox_messages SET headers = ${p[0]}, error_history = ${p[1]} WHERE id = ${p[2]}`, ['{"traceparent": ', '[{"at"', id]);
    const { body } = await send('GET', `messages/${id}`, undefined).expect(200);
    expect(body.headers).toEqual({ '(unreadable headers)': '{"traceparent": ' });
    expect(body.errors).toEqual([{ at: '', error: '(unreadable error history) [{"at"' }]);
    await h.dataSource.query(`DELETE FROM outbox_messages WHERE id = ${p[0]}`, [id]);
  });

  it('changed nothing: the one row is as written, and nothing is paused', async () => {
    const { body } = await send('GET', `messages/${seeded}`, undefined).expect(200);
    expect(body).toMatchObject({ status: 'pending', attempts: 0 });
    expect((await send('GET', 'destinations/paused', undefined).expect(200)).body).toEqual([]);
  });
}
