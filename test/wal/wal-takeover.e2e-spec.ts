import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import { waitFor } from '../support/wait-for';
import { startWalChild, type WalChild } from '../support/wal-instance.process';
import { walSandbox, type WalApp, type WalSandbox } from '../support/wal.harness';

describe('WAL delivery mode: one instance streams a slot; another takes over after it is SIGKILLed', () => {
  let sandbox: WalSandbox;
  let standby: WalApp;
  let child: WalChild | undefined;
  const recording = new RecordingOutboxTransport();

  beforeAll(async () => {
    sandbox = await walSandbox('wal_takeover');
    // The tables first (the child does not synchronize), by an instance that does not relay.
    await (await sandbox.start({ relay: false })).close();
  });
  afterAll(async () => {
    await child?.kill();
    await sandbox?.drop();
  });

  const write = async (app: WalApp, from: number, count: number): Promise<string[]> => {
    const ids: string[] = [];
    for (let seq = from; seq < from + count; seq++) {
      const event = { type: 'parcel.noted', aggregateType: 'parcel', aggregateId: `p${seq % 3}`, payload: { seq }, topic: 'parcels' };
      ids.push(...(await app.dataSource.transaction((manager) => app.publisher.add(manager, event))));
    }
    return ids;
  };

  it('streams from one instance only, and resumes on the other within 10 s of a SIGKILL, losing nothing', async () => {
    const first = startWalChild(sandbox);
    child = first;
    await first.ready;
    standby = await sandbox.start({ transport: recording, batchSize: 10 });

    const before = await write(standby, 0, 30);
    await waitFor('the child instance publishing everything written so far', () => before.every((id) => first.published.some((m) => m.id === id)));
    expect(recording.published).toHaveLength(0);
    const [{ pid }] = await postgresPid(sandbox);
    expect(pid).not.toBeNull();

    const killedAt = Date.now();
    await first.kill();
    const after = await write(standby, 30, 30);
    await waitFor('the standby publishing what was written after the kill', () => after.every((id) => recording.published.some((m) => m.envelope.id === id)), 20_000);
    const takeoverMs = Date.now() - killedAt;
    if (process.env.WAL_TAKEOVER_PRINT) process.stderr.write(`takeover: ${takeoverMs} ms from SIGKILL to the last of 30 events published by the standby\n`);
    expect(takeoverMs).toBeLessThan(10_000);

    const everything = [...before, ...after];
    const seen = new Set([...first.published.map((m) => m.id), ...recording.published.map((m) => m.envelope.id)]);
    expect(everything.filter((id) => !seen.has(id))).toEqual([]);
    for (const key of ['p0', 'p1', 'p2']) {
      const order = recording.published.filter((m) => m.key === key).map((m) => (m.envelope.payload as { seq: number }).seq);
      expect(order).toEqual([...order].sort((a, b) => a - b));
    }
  });
});

async function postgresPid(sandbox: WalSandbox): Promise<Array<{ pid: number | null }>> {
  const { Client } = await import('pg');
  const client = new Client({ connectionString: sandbox.url });
  await client.connect();
  try {
    return (await client.query(`SELECT active_pid AS pid FROM pg_replication_slots WHERE slot_name = $1`, [sandbox.slotName])).rows;
  } finally {
    await client.end();
  }
}
