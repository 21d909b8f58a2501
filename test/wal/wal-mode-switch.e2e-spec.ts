import { OutboxConfigurationError } from '@nest-outbox/outbox';
import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import { waitFor } from '../support/wait-for';
import { walSandbox, type WalSandbox } from '../support/wal.harness';

const note = (aggregateId: string, label: string) => ({ type: 'parcel.noted', aggregateType: 'parcel', aggregateId, payload: { label }, topic: 'parcels' });

/**
 * Switching an app from the WAL mode back to the table mode loses nothing. With write 'message' a
 * table-mode relay never reads the slot, so it refuses to start while the slot holds events no
 * relay published; with write 'row' it takes over the rows the stream had not published.
 */
describe('WAL delivery mode: switching back to the table mode', () => {
  let sandbox: WalSandbox;

  beforeAll(async () => {
    sandbox = await walSandbox('wal_switch');
  });
  afterAll(() => sandbox?.drop());

  it("write 'row': a table-mode relay publishes, in order, the rows a write-only WAL instance wrote", async () => {
    const writer = await sandbox.start({ relay: false, wal: { write: 'row' } });
    for (const label of ['a', 'b', 'c']) await writer.dataSource.transaction((manager) => writer.publisher.add(manager, note('switch-rows', label)));
    const lines: string[] = [];
    const logger = { log: (message: unknown) => void lines.push(String(message)), error: () => undefined, warn: () => undefined };
    const relayed = new RecordingOutboxTransport();
    const tableRelay = await sandbox.start({ delivery: 'table', transport: relayed, pollIntervalMs: 100 }, { logger });
    await waitFor('the three rows published by the table relay', () => relayed.published.filter((m) => m.key === 'switch-rows').length === 3);
    expect(relayed.published.filter((m) => m.key === 'switch-rows').map((m) => (m.envelope.payload as { label: string }).label)).toEqual(['a', 'b', 'c']);
    expect(lines).toContain('3 row(s) the WAL stream had not published yet go to this relay (table mode).');
    await tableRelay.close();
    await writer.close();
  });

  it("write 'message': refuses a table-mode relay while the slot holds unpublished events, and starts once a WAL relay drained them", async () => {
    // A write-only WAL instance creates the slot and writes three events nobody streams yet.
    const writer = await sandbox.start({ relay: false, wal: { write: 'message' } });
    for (const label of ['a', 'b', 'c']) await writer.dataSource.transaction((manager) => writer.publisher.add(manager, note('switch-1', label)));

    const refusal = await sandbox.start({ delivery: 'table', transport: new RecordingOutboxTransport() }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(OutboxConfigurationError);
    expect((refusal as Error).message).toContain(`The replication slot "${sandbox.slotName}" holds 3 outbox event(s) written in the WAL delivery mode`);
    expect((refusal as Error).message).toContain("delivery: 'wal'");

    const streamed = new RecordingOutboxTransport();
    const walRelay = await sandbox.start({ transport: streamed, wal: { write: 'message' } });
    await waitFor('the three events streamed', () => streamed.published.filter((m) => m.key === 'switch-1').length === 3);
    await walRelay.close();
    // The stream confirms what the broker acknowledged; the slot is free once its reader is gone.
    const warnings: string[] = [];
    const logger = { log: () => undefined, error: () => undefined, warn: (message: unknown) => void warnings.push(String(message)) };
    await waitFor('the slot confirmed and free', async () => {
      const [slot] = await writer.dataSource.query(`SELECT active FROM pg_replication_slots WHERE slot_name = $1`, [sandbox.slotName]);
      if (!slot || slot.active) return false;
      return sandbox.start({ delivery: 'table', transport: new RecordingOutboxTransport() }, { logger }).then(
        (app) => app.close().then(() => true),
        () => false,
      );
    });
    // The empty slot loses nothing, but it holds the server's WAL: the table-mode start says so, and what to do.
    expect(warnings.filter((line) => line.includes(`"${sandbox.slotName}"`))).toEqual([
      expect.stringMatching(new RegExp(`^The replication slot "${sandbox.slotName}" of the WAL delivery mode is still there, empty of outbox events.*\\(\\d+ bytes retained now.*drop it with "nest-outbox wal drop-slot"\\.$`)),
    ]);
    await writer.close();
  });
});
