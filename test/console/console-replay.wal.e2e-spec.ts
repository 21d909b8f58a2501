import request from 'supertest';
import { createConsoleHarness, OPERATOR_TOKEN, type ConsoleHarness } from '../support/console.harness';
import { RecordingTransport } from '../support/recording.transport';

const auth = { Authorization: `Bearer ${OPERATOR_TOKEN}` };

/**
 * The WAL delivery mode keeps no row of what it streamed: a replay that matches nothing in the table
 * says so (409, and why, and what to do) instead of answering "0 replayed". What the stream moved to
 * the table (a failed publish) is a row like any other, and is replayed once published.
 */
describe('Replay in the WAL delivery mode (PostgreSQL)', () => {
  let h: ConsoleHarness;

  beforeEach(async () => {
    h = await createConsoleHarness('postgres', undefined, undefined, { delivery: 'wal' });
  });
  afterEach(() => h.close());

  const post = (path: string, body: object) => request(h.app.getHttpServer()).post(`/outbox/api/${path}`).set(auth).send(body);

  it('refuses a replay that finds no row, naming the WAL mode and what to do instead; replays rows the stream moved to the table', async () => {
    const refused = await post('bulk/replay', { type: 'orders.order-placed', reason: 'lost', dryRun: false }).expect(409);
    expect(refused.body.message).toMatch(/WAL delivery mode \(delivery: 'wal'\), which keeps no row of what it published.*Replay them from the broker/);

    // A message the stream could not publish became a row; the table relay published it later.
    const [moved] = await h.add([{ type: 'orders.order-placed', aggregateType: 'order', aggregateId: 'o-1', payload: {} }]);
    const relay = h.relay('table-relay', new RecordingTransport());
    while ((await relay.publishBatch()).claimed > 0);
    const statusOf = async () => ((await h.dataSource.query('SELECT status FROM outbox_messages WHERE id = $1', [moved])) as Array<{ status: string }>)[0].status;
    // A dry run changes nothing, and says what a replay would do.
    const dry = await post('bulk/replay', { type: 'orders.order-placed', reason: 'lost', dryRun: true }).expect(200);
    expect(dry.body).toMatchObject({ matched: 1, replayed: 0, dryRun: true, note: expect.stringMatching(/keeps no row of what it streamed.* would be replayed, not every message/) });
    expect(await statusOf()).toBe('published');
    const outcome = await post('bulk/replay', { type: 'orders.order-placed', reason: 'lost', dryRun: false }).expect(200);
    expect(outcome.body).toMatchObject({ matched: 1, replayed: 1, note: expect.stringMatching(/keeps no row of what it streamed.* were replayed, not every message/) });
    expect(await statusOf()).toBe('pending');
  });
});
