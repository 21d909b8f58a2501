import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import { runCli } from '../../libs/outbox/src/cli/outbox-cli';
import { postgresAdmin } from '../support/databases';
import { waitFor } from '../support/wait-for';
import { walSandbox, type WalSandbox } from '../support/wal.harness';

describe('nest-outbox wal: the slot is dropped only by an explicit command', () => {
  let sandbox: WalSandbox;
  beforeAll(async () => (sandbox = await walSandbox('wal_cli')));
  afterAll(() => sandbox?.drop());

  const cli = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli([...argv, '--url', sandbox.url], { out: (line) => out.push(line), err: (line) => err.push(line), env: {} });
    return { code, out: out.join('\n'), err: err.join('\n') };
  };
  const slotExists = async () => (await postgresAdmin(sandbox.url, `SELECT 1 FROM pg_replication_slots WHERE slot_name = '${sandbox.slotName}'`)) === 1;

  it('reports the slot, refuses to drop it while an instance streams it or while it holds unpublished events, and drops it with --force', async () => {
    const app = await sandbox.start({ transport: new RecordingOutboxTransport() });
    await waitFor('the instance streaming the slot', async () => (await cli('wal', 'status', sandbox.slotName)).out.includes('streamed by an instance'));
    const refused = await cli('wal', 'drop-slot', sandbox.slotName);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/is active/);
    expect(await slotExists()).toBe(true);

    await app.close();
    await waitFor('the slot released', async () => (await cli('wal', 'status', sandbox.slotName)).out.includes('not streamed now, 0 outbox event(s)'));

    // Messages written while no instance streams wait in the slot only (write 'message'): dropping it would lose them.
    const writer = await sandbox.start({ relay: false, wal: { write: 'message' } });
    const note = (aggregateId: string) => ({ type: 'parcel.noted', aggregateType: 'parcel', aggregateId, payload: {}, topic: 'parcels' });
    await writer.dataSource.transaction((manager) => writer.publisher.add(manager, [note('a'), note('b')]));
    await writer.dataSource.transaction((manager) => writer.publisher.add(manager, note('c')));
    await writer.close();
    expect((await cli('wal', 'status', sandbox.slotName)).out).toContain('not streamed now, 3 outbox event(s) in it not yet published');
    const holding = await cli('wal', 'drop-slot', sandbox.slotName);
    expect(holding.code).toBe(2);
    expect(holding.err).toContain('still holds 3 outbox event(s)');
    expect(holding.err).toContain('--force');
    expect(await slotExists()).toBe(true);
    expect(await cli('wal', 'drop-slot', sandbox.slotName, '--force')).toMatchObject({ code: 0, out: `Dropped slot "${sandbox.slotName}" and publication "${sandbox.slotName}".` });
    expect(await slotExists()).toBe(false);
    expect(await cli('wal', 'status', sandbox.slotName)).toMatchObject({ code: 1, out: `No slot "${sandbox.slotName}" in this database.` });
  });

  it('refuses a slot name PostgreSQL would not take before connecting', async () => {
    const result = await cli('wal', 'drop-slot', 'Bad-Name');
    expect(result.code).toBe(2);
    expect(result.err).toContain('"wal.slotName"');
  });
});
