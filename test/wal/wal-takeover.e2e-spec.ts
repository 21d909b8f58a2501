import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import { waitFor } from '../support/wait-for';
import { walSandbox, type WalApp, type WalSandbox } from '../support/wal.harness';

interface Published {
  id: string;
  key: string;
  seq: number;
}

/** An instance in a child process, so that it can be SIGKILLed; collects what it publishes. */
function startChild(sandbox: WalSandbox): { child: ChildProcess; published: Published[]; ready: Promise<void> } {
  const published: Published[] = [];
  const child = fork(join(__dirname, 'wal-instance.child.ts'), [], {
    execArgv: ['-r', join(__dirname, '..', 'support', 'ts-child.register.cjs')],
    env: { ...process.env, WAL_CHILD: JSON.stringify({ url: sandbox.url, schema: sandbox.schema, slotName: sandbox.slotName }) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.on('message', (message: { t: string; text?: string } & Published) => {
      if (message.t === 'ready') resolve();
      else if (message.t === 'failed') reject(new Error(`the child instance failed to start: ${message.text}`));
      else if (message.t === 'published') published.push({ id: message.id, key: message.key, seq: message.seq });
    });
    child.once('exit', (code) => reject(new Error(`the child instance exited (${code}) before it was ready`)));
  });
  return { child, published, ready };
}

describe('WAL delivery mode: one instance streams a slot; another takes over after it is SIGKILLed', () => {
  let sandbox: WalSandbox;
  let standby: WalApp;
  let child: ChildProcess | undefined;
  const recording = new RecordingOutboxTransport();

  beforeAll(async () => {
    sandbox = await walSandbox('wal_takeover');
    // The tables first (the child does not synchronize), by an instance that does not relay.
    await (await sandbox.start({ relay: false })).close();
  });
  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
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
    const first = startChild(sandbox);
    child = first.child;
    await first.ready;
    standby = await sandbox.start({ transport: recording, batchSize: 10 });

    const before = await write(standby, 0, 30);
    await waitFor('the child instance publishing everything written so far', () => before.every((id) => first.published.some((m) => m.id === id)));
    expect(recording.published).toHaveLength(0);
    const [{ pid }] = await postgresPid(sandbox);
    expect(pid).not.toBeNull();

    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    const killedAt = Date.now();
    first.child.kill('SIGKILL');
    await exited;
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
