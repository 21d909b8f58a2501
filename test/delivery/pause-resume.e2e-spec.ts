import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import { runCli } from '../../libs/outbox/src/cli/outbox-cli';
import { createSqlOutboxConsoleStore } from '../../libs/outbox/src/typeorm/outbox-sql.factory';
import { waitFor } from '../support/wait-for';
import { walSandbox, type WalApp, type WalSandbox } from '../support/wal.harness';

/**
 * What an operator does in an incident, in either delivery mode: `nest-outbox pause orders`, while
 * orders keep being placed; nothing more reaches "orders" until `nest-outbox resume orders`, then
 * every order does, each aggregate's in the order written; "audit" flows throughout. The same test
 * for both modes: in the WAL mode the pause reaches the stream in commit order and its messages wait
 * in the table, without stopping the slot.
 */
describe.each(['table', 'wal'] as const)('a paused destination in the %s delivery mode', (delivery) => {
  let sandbox: WalSandbox;
  let app: WalApp | undefined;
  const recording = new RecordingOutboxTransport();

  beforeAll(async () => (sandbox = await walSandbox(`pause_${delivery}`)));
  afterAll(async () => {
    await app?.close();
    await sandbox?.drop();
  });

  const cli = async (...args: string[]) => {
    const out: string[] = [];
    const code = await runCli([...args, '--url', sandbox.url, '--schema', sandbox.schema], { out: (line) => out.push(line), err: (line) => out.push(line), env: {} });
    return { code, text: out.join('\n') };
  };
  const write = (seq: number, topic: string, aggregateId = `o${seq % 3}`) =>
    app!.dataSource.transaction((manager) => app!.publisher.add(manager, { type: `${topic}.noted`, aggregateType: 'order', aggregateId, payload: { seq }, topic }));
  const publishedTo = (topic: string) => recording.published.filter((message) => message.destination === topic);
  const seqOf = (message: { envelope: { payload: unknown } }) => (message.envelope.payload as { seq: number }).seq;
  const heldRows = (ids: string[]): Promise<Array<{ status: string; last_error: string | null; attempts: number }>> =>
    app!.dataSource.query('SELECT status, last_error, attempts FROM outbox_messages WHERE id = ANY($1::uuid[]) ORDER BY position', [ids]);

  it('holds its messages from the pause on, in order, while another destination flows; releases them on resume', async () => {
    // The table relay polls often: in the WAL mode it publishes what the stream moved to the table.
    app = await sandbox.start({ delivery, transport: recording, pollIntervalMs: 100, backoff: { initialMs: 50, maxMs: 100, jitter: 0 } });
    const before = (await Promise.all([0, 1, 2].map((seq) => write(seq, 'orders')))).flat();
    await waitFor('the orders written before the pause published', () => before.every((id) => recording.published.some((m) => m.envelope.id === id)));
    // Known to the pause's "is this a destination" check once counted (the stream saves its counts a moment after the broker's answer).
    await waitFor('the published orders counted', async () => (JSON.parse((await cli('status', '--json')).text) as { publishedLastHour: number }).publishedLastHour >= before.length);

    expect(await cli('pause', 'orders', '--reason', 'partner maintenance')).toMatchObject({ code: 0 });
    const held: string[] = [];
    for (let seq = 3; seq < 12; seq++) held.push(...(await write(seq, 'orders')));
    const audit: string[] = [];
    for (let seq = 0; seq < 5; seq++) audit.push(...(await write(seq, 'audit', `a${seq}`)));
    await waitFor('the audit events published while orders are paused', () => audit.every((id) => recording.published.some((m) => m.envelope.id === id)));
    // Give the paused orders every chance to leak: several polls and stream batches.
    const settledAt = Date.now();
    await waitFor('a second of quiet', () => Date.now() - settledAt >= 1_000);
    expect(publishedTo('orders').filter((m) => held.includes(m.envelope.id))).toEqual([]);
    const status = await cli('status');
    expect(status.text).toContain('orders');

    if (delivery === 'wal') {
      // Moved to the table by the stream, each with the reason it is held (not a failure: no attempt made).
      const waiting = await heldRows(held);
      expect(waiting.map((row) => row.last_error)).toEqual(held.map(() => expect.stringMatching(/^Held (because the destination "orders" was paused|behind an earlier message)/)));
      expect(waiting.map((row) => row.attempts)).toEqual(held.map(() => 0));
    }

    expect(await cli('resume', 'orders')).toMatchObject({ code: 0, text: expect.stringContaining('Resumed "orders"') });
    await waitFor('the held orders published after the resume', () => held.every((id) => recording.published.some((m) => m.envelope.id === id)), 30_000);
    if (delivery === 'wal') {
      // Published at the first try: no note of the hold is left to read as an error, as on any row published at once.
      const rows = await waitFor('the held rows marked published', async () => {
        const found = await heldRows(held);
        return found.every((row) => row.status === 'published') && found;
      });
      expect(rows.map(({ status, last_error, attempts }) => ({ status, last_error, attempts }))).toEqual(held.map(() => ({ status: 'published', last_error: null, attempts: 1 })));
    }
    for (const aggregate of ['o0', 'o1', 'o2']) {
      const seqs = publishedTo('orders').filter((m) => m.envelope.aggregateId === aggregate).map(seqOf);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    }
    // After the resume, orders go out again as they are written.
    const [later] = await write(20, 'orders', 'o9');
    await waitFor('an order written after the resume published', () => recording.published.some((m) => m.envelope.id === later));
  });

  it('counts what it published in CLI status, the stats and the console chart, whether from rows or from the stream', async () => {
    const published = new Set(recording.published.map((m) => m.envelope.id)).size;
    expect(published).toBeGreaterThanOrEqual(18);
    const status = await waitFor('status counting every message published', async () => {
      const report = JSON.parse((await cli('status', '--json')).text) as { publishedLastHour: number; destinations: Array<{ destination: string; publishedLastHour: number }>; wal?: Array<{ slotName: string; active: boolean }> };
      return report.publishedLastHour >= published && report;
    });
    expect(status.destinations.find((d) => d.destination === 'audit')?.publishedLastHour).toBe(5);
    if (delivery === 'wal') expect(status.wal).toEqual([expect.objectContaining({ slotName: sandbox.slotName, active: true })]);
    else expect(status.wal).toBeUndefined();
    const chart = await createSqlOutboxConsoleStore(app!.dataSource, { tableName: 'outbox_messages', schema: sandbox.schema }).throughput(60);
    expect(chart.reduce((sum, point) => sum + point.published, 0)).toBeGreaterThanOrEqual(published);
    expect(new Set(chart.map((point) => point.minute)).size).toBe(chart.length);
  });
});
