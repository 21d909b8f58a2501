import { Client } from 'pg';
import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import { PrivatePostgres } from '../support/private-postgres';
import { waitFor } from '../support/wait-for';
import { walSandbox, type WalApp, type WalSandbox } from '../support/wal.harness';
import { closeAll } from '../support/teardown';

const BATCH = 20;
const EVENTS = 200;

/**
 * PostgreSQL 15 and 16 write a logical slot's confirmed position to disk only when something else
 * about the slot changes, so a restarted server replays from an older position: everything
 * published in the last seconds, again. The stream keeps its own position in a table and starts
 * from it, so a restart replays at most what was in flight. Each restart here comes after every
 * event was published and its position saved: a replay of more than one batch fails the test.
 */
describe('WAL delivery mode: a PostgreSQL restart replays at most what was in flight', () => {
  let server: PrivatePostgres;
  let sandbox: WalSandbox;
  let app: WalApp | undefined;
  const recording = new RecordingOutboxTransport();

  beforeAll(async () => {
    server = await PrivatePostgres.start('wal-restart');
    sandbox = await walSandbox('wal_restart', server.url());
  }, 60_000);
  afterAll(() => closeAll(() => app?.close(), () => sandbox?.drop(), () => server?.cleanup()), 60_000);

  // Where the WAL stood just before the last write's commit: a saved position past it covers that commit.
  let beforeLastCommit = '';
  const write = async (from: number, count: number): Promise<string[]> => {
    const ids: string[] = [];
    for (let seq = from; seq < from + count; seq += 10) {
      const events = Array.from({ length: 10 }, (_, k) => ({ type: 'parcel.noted', aggregateType: 'parcel', aggregateId: `p${(seq + k) % 7}`, payload: { seq: seq + k }, topic: 'parcels' }));
      [{ lsn: beforeLastCommit }] = await app!.dataSource.query(`SELECT pg_current_wal_insert_lsn()::text AS lsn`);
      ids.push(...(await app!.dataSource.transaction((manager) => app!.publisher.add(manager, events))));
    }
    return ids;
  };
  const timesPublished = (id: string) => recording.published.filter((message) => message.envelope.id === id).length;
  const savedPastLastCommit = async (): Promise<boolean> => {
    const client = new Client({ connectionString: server.url() });
    await client.connect();
    try {
      const { rows } = await client.query(`SELECT confirmed_lsn > $2::pg_lsn AS past FROM ${sandbox.schema}.outbox_messages_wal_positions WHERE slot_name = $1`, [sandbox.slotName, beforeLastCommit]);
      return rows[0]?.past === true;
    } finally {
      await client.end();
    }
  };

  it.each([['fast'], ['immediate'], ['fast'], ['immediate']] as const)('restart -m %s: every event published, at most one batch again', async (mode) => {
    app ??= await sandbox.start({ transport: recording, batchSize: BATCH });
    const from = recording.published.length;
    const ids = await write(from, EVENTS);
    await waitFor('every event published', () => ids.every((id) => timesPublished(id) >= 1), 30_000);
    // The stream saved the position of its last batch (after the broker's acknowledgement). Only
    // positions of commits that carried messages are saved, and the last write's is the only such
    // commit past beforeLastCommit. (The slot's own position is no yardstick: an idle stream
    // confirms keepalives past the saved position without saving them.)
    await waitFor('the last batch\'s position saved', savedPastLastCommit);
    const before = recording.published.length;

    await server.restart(mode);
    // After the restart, ten more events: they arrive once the stream reads again.
    const after = await waitFor('a write after the restart', () => write(from + EVENTS, 10).catch(() => undefined), 30_000);
    await waitFor('the events written after the restart published', () => after.every((id) => timesPublished(id) >= 1), 30_000);

    const replayed = recording.published.slice(before).filter((message) => ids.includes(message.envelope.id)).length;
    // Without the saved position, all EVENTS came again after each restart (PostgreSQL 15).
    expect(replayed).toBeLessThanOrEqual(BATCH);
    expect(ids.filter((id) => timesPublished(id) === 0)).toEqual([]);
  });
});
