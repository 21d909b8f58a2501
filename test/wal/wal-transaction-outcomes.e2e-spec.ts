import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import { Parcel } from '../support/parcel.fixtures';
import { waitFor } from '../support/wait-for';
import { walSandbox, type WalApp, type WalSandbox } from '../support/wal.harness';

/**
 * What a WAL-mode transaction streams when it does not simply commit: its logical messages are
 * transactional, so a savepoint rolled back, a COMMIT refused by the database and a ROLLBACK on a
 * query runner used again all leave nothing on the stream, while what committed around them streams.
 */
describe('WAL delivery mode: savepoints, a refused COMMIT and a reused query runner', () => {
  let sandbox: WalSandbox;
  let app: WalApp;
  const transport = new RecordingOutboxTransport();
  const streamed = (parcel: Parcel) => transport.published.filter((message) => message.key === parcel.id).map((message) => message.envelope.type);

  /** Resolves once a marker parcel saved after `parcels` has streamed: whatever of theirs was going to stream has. */
  async function afterStreamed(...parcels: Parcel[]): Promise<void> {
    const marker = Parcel.register(`marker-after-${parcels.map((parcel) => parcel.label).join('-')}`, 1);
    await app.dataSource.getRepository(Parcel).save(marker);
    await waitFor(`the marker after ${parcels.length} parcel(s) to stream`, () => streamed(marker).length === 1);
  }

  beforeAll(async () => {
    sandbox = await walSandbox('wal_outcomes');
    app = await sandbox.start({ transport });
    // A parcel labelled "refused-at-commit" passes its INSERT and fails at COMMIT, when deferred triggers run.
    await app.dataSource.query(`
      CREATE FUNCTION refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.label = 'refused-at-commit' THEN RAISE EXCEPTION 'parcel refused at commit'; END IF;
        RETURN NEW;
      END $$`);
    await app.dataSource.query(`
      CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER INSERT ON parcels
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_at_commit()`);
  });
  afterAll(() => sandbox?.drop());

  it('drops what a rolled-back savepoint saved and streams what its enclosing transaction and a released savepoint saved', async () => {
    const outer = Parcel.register('outer', 10);
    const undone = Parcel.register('undone-savepoint', 20);
    const kept = Parcel.register('kept-savepoint', 30);
    await app.dataSource.transaction(async (manager) => {
      await manager.save(outer);
      await expect(
        manager.transaction(async (inner) => {
          await inner.save(undone);
          throw new Error('savepoint undone');
        }),
      ).rejects.toThrow('savepoint undone');
      await manager.transaction((inner) => inner.save(kept));
    });
    await waitFor('the kept parcels’ events to stream', () => streamed(outer).length === 1 && streamed(kept).length === 1);
    await afterStreamed(outer, undone, kept);
    expect(streamed(undone)).toEqual([]);
    expect(await app.dataSource.query(`SELECT label FROM parcels WHERE id = $1`, [undone.id])).toEqual([]);
  });

  it('streams nothing of a transaction whose COMMIT the database refuses after its message was written', async () => {
    const refused = Parcel.register('refused-at-commit', 10);
    await expect(app.dataSource.getRepository(Parcel).save(refused)).rejects.toThrow('parcel refused at commit');
    await afterStreamed(refused);
    expect(streamed(refused)).toEqual([]);
    expect(await app.dataSource.query(`SELECT label FROM parcels WHERE id = $1`, [refused.id])).toEqual([]);
    // The events stay on the aggregate: saved again once the refusal is lifted, they stream.
    refused.label = 'accepted-on-retry';
    await app.dataSource.getRepository(Parcel).save(refused);
    await waitFor('the retried save’s event to stream', () => streamed(refused).length === 1);
  });

  it('streams nothing of a rolled-back transaction on a query runner, and what the runner commits next', async () => {
    const rolledBack = Parcel.register('rolled-back-runner', 10);
    const later = Parcel.register('later-on-runner', 20);
    const runner = app.dataSource.createQueryRunner();
    try {
      await runner.startTransaction();
      await runner.manager.save(rolledBack);
      await runner.rollbackTransaction();
      await runner.startTransaction();
      await runner.manager.save(later);
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }
    await waitFor('the later transaction’s event to stream', () => streamed(later).length === 1);
    await afterStreamed(rolledBack, later);
    expect(streamed(rolledBack)).toEqual([]);
  });
});
