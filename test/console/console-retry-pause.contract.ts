import request from 'supertest';
import { Registry } from 'prom-client';
import { OutboxHealthIndicator } from '@nest-outbox/outbox/observability';
import type { DeliveryMode, TestDatabase } from '../support/outbox-harness';
import { createConsoleHarness, OPERATOR_TOKEN, type ConsoleHarness } from '../support/console.harness';
import { RecordingTransport } from '../support/recording.transport';
import { waitFor } from '../support/wait-for';

const auth = { Authorization: `Bearer ${OPERATOR_TOKEN}` };

/** "now + 1 hour" and "now" in the type of the database's timestamp columns. */
const LATER: Record<TestDatabase, string> = {
  postgres: `now() + interval '1 hour'`,
  sqlite: `strftime('%Y-%m-%d %H:%M:%f', 'now', '+1 hour')`,
  mariadb: 'NOW(3) + INTERVAL 1 HOUR',
};

/**
 * "Retry now", pause confirmation and pause reasons on one database, through HTTP; health and the
 * gauge see the pause. In the WAL mode (PostgreSQL) the rows are those the stream moved to the
 * table, where the table relay retries them and pauses hold them: every case applies there.
 */
export function consoleRetryPauseContract(database: TestDatabase, mode: DeliveryMode = 'table'): void {
  let h: ConsoleHarness;
  let registry: Registry;

  beforeEach(async () => {
    registry = new Registry();
    // A lag threshold that any paused row would pass at once: the pause must not count against it.
    h = await createConsoleHarness(database, undefined, undefined, { delivery: mode, metrics: { registry }, health: { maxLagMs: 1 }, stats: { refreshIntervalMs: 100 } });
  });
  afterEach(() => h.close());

  const get = (path: string) => request(h.app.getHttpServer()).get(`/outbox/api/${path}`).set(auth);
  const post = (path: string, body: object = {}) => request(h.app.getHttpServer()).post(`/outbox/api/${path}`).set(auth).send(body);
  const p = (index: number) => (database === 'postgres' ? `$${index}` : '?');
  const row = async (id: string) =>
    (await h.dataSource.query(`SELECT status, attempts, next_attempt_at AS "next", last_error AS "lastError" FROM outbox_messages WHERE id = ${p(1)}`, [id]))[0];
  const message = (aggregateId: string, topic?: string) => ({ type: 'orders.order-placed', aggregateType: 'order', aggregateId, payload: {}, topic });

  /** As the relay leaves a row after failed attempts: pending, attempts counted, next attempt an hour away. */
  async function inBackoff(ids: string[], attempts = 2): Promise<void> {
    for (const id of ids) {
      await h.dataSource.query(
        `UPDATE outbox_messages SET attempts = ${attempts}, last_error = 'broker down', next_attempt_at = ${LATER[database]} WHERE id = ${p(1)}`,
        [id],
      );
    }
  }

  it('retries one row in backoff now, keeping its attempts; refuses rows that are not in backoff', async () => {
    const [waiting, delayed] = await h.add([message('r-1'), message('r-2')]);
    await inBackoff([waiting]);
    await inBackoff([delayed], 0);
    const transport = new RecordingTransport();
    await h.relay('before', transport).publishBatch();
    expect(transport.delivered).toEqual([]);

    await post(`messages/${waiting}/retry-now`).expect(200, { id: waiting, status: 'pending', retryNow: true });
    expect(await row(waiting)).toMatchObject({ status: 'pending', attempts: 2, lastError: 'broker down' });
    await h.relay('after', transport).publishBatch();
    expect(transport.delivered.map((m) => m.envelope.id)).toEqual([waiting]);
    expect(await row(waiting)).toMatchObject({ status: 'published', attempts: 3 });

    const published = await post(`messages/${waiting}/retry-now`).expect(409);
    expect(published.body.message).toContain('not waiting in backoff (status published, 3 attempt(s)');
    // A delayed delivery that never failed is not in backoff: never published early.
    expect((await post(`messages/${delayed}/retry-now`).expect(409)).body.message).toContain('0 attempt(s)');
    expect(await row(delayed)).toMatchObject({ status: 'pending', attempts: 0 });
  });

  it('retries by filter only the rows in backoff it matches, after a dry run that changes nothing', async () => {
    const invoices = await h.add([message('i-1', 'invoices'), message('i-2', 'invoices'), message('i-3', 'invoices')]);
    const [order] = await h.add([message('o-1')]);
    const [delayed] = await h.add([message('i-4', 'invoices')]);
    await inBackoff([...invoices, order], 4);
    await inBackoff([delayed], 0);
    const ids = async (query: string) => (await get(`messages?${query}`).expect(200)).body.messages.map((m: { id: string }) => m.id).sort();
    expect(await ids('retrying=true')).toEqual([...invoices, order].sort());

    expect((await post('bulk/retry-now', { destination: 'invoices', dryRun: true }).expect(200)).body).toEqual({ matched: 3, changed: 0, dryRun: true });
    expect(await ids('retrying=true&destination=invoices')).toEqual([...invoices].sort());
    expect((await post('bulk/retry-now', { destination: 'invoices', dryRun: false }).expect(200)).body).toEqual({ matched: 3, changed: 3, dryRun: false });
    expect(await ids('retrying=true')).toEqual([order]);
    for (const id of invoices) expect(await row(id)).toMatchObject({ status: 'pending', attempts: 4 });
    expect(await row(delayed)).toMatchObject({ attempts: 0 });

    const transport = new RecordingTransport();
    await h.relay('bulk', transport).publishBatch();
    expect(transport.delivered.map((m) => m.envelope.id).sort()).toEqual([...invoices].sort());
  });

  it('pauses an unknown destination only when confirmed; the reason shows in the console, health and the gauge', async () => {
    await h.add([message('o-1'), message('o-2')]);
    const refused = await post('destinations/pause', { destination: 'ordres', reason: 'typo' }).expect(400);
    expect(refused.body).toMatchObject({ field: 'confirmUnknown', message: [expect.stringContaining('No outbox row has ever used the destination "ordres"')] });
    expect((await get('destinations/paused').expect(200)).body).toEqual([]);

    await post('destinations/pause', { destination: 'orders', reason: 'partner maintenance until 14:00' }).expect(200, { destination: 'orders', paused: true, changed: true });
    // Four-byte characters too (MariaDB: utf8mb4 all the way, or the insert fails).
    await post('destinations/pause', { destination: 'audit', confirmUnknown: true }).expect(200);
    await post('destinations/pause', { destination: 'audit-🚧', reason: '🚧 partner maintenance', confirmUnknown: true }).expect(200);
    expect((await get('destinations/paused').expect(200)).body.find((p: { destination: string }) => p.destination === 'audit-🚧')).toMatchObject({ reason: '🚧 partner maintenance' });
    await post('destinations/resume', { destination: 'audit-🚧' }).expect(200, { destination: 'audit-🚧', paused: false, changed: true });
    const paused = (await get('summary?fresh=true').expect(200)).body.paused;
    expect(paused).toEqual([
      { destination: 'audit', pausedAt: expect.any(String), reason: null },
      { destination: 'orders', pausedAt: expect.any(String), reason: 'partner maintenance until 14:00' },
    ]);

    // Rows held by a pause are reported with it, not judged as lag: a deliberate pause leaves /health up.
    const health = await h.app.get(OutboxHealthIndicator).isHealthy('outbox');
    expect(health.outbox).toMatchObject({
      status: 'up',
      pending: 0,
      paused: [
        { destination: 'audit', reason: null, pending: 0 },
        { destination: 'orders', reason: 'partner maintenance until 14:00', pending: 2 },
      ],
    });
    expect(await registry.metrics()).toMatch(/outbox_destination_paused\{outbox="default",destination="orders"\} 1\n/);

    await post('destinations/resume', { destination: 'orders' }).expect(200);
    const resumed = await waitFor('the gauge at 0 after resuming', async () => {
      const text = await registry.metrics();
      return /outbox_destination_paused\{outbox="default",destination="orders"\} 0\n/.test(text) && text;
    }, 5_000);
    expect(resumed).toMatch(/outbox_destination_paused\{outbox="default",destination="audit"\} 1\n/);
    // The two rows are not paused any more: their lag counts again, over the 1 ms threshold.
    const down = await waitFor('health down by lag', async () => {
      const result = (await h.app.get(OutboxHealthIndicator).isHealthy('outbox')).outbox;
      return result.status === 'down' && result;
    }, 5_000);
    expect(down).toMatchObject({ pending: 2, paused: [{ destination: 'audit' }], reason: expect.stringContaining('over health.maxLagMs') });
  });
}
