import { randomBytes } from 'node:crypto';
import { OutboxConfigurationError, OutboxModule } from '@nest-outbox/outbox';
import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import { isolatedDatabase } from '../support/outbox-harness';
import { postgresAdmin } from '../support/databases';
import { startupFailure } from '../support/startup-failure';
import { waitFor } from '../support/wait-for';
import { walSandbox, type WalSandbox } from '../support/wal.harness';

describe('WAL delivery mode: refusals', () => {
  it('refuses a delivery mode that does not exist where the module is declared, naming the option', () => {
    expect(() => OutboxModule.forRoot({ transport: new RecordingOutboxTransport(), delivery: 'stream' as 'wal' })).toThrow(`"delivery": expected 'table' or 'wal'`);
  });

  it('refuses the WAL mode on SQLite at startup, saying it is PostgreSQL only', async () => {
    const sqlite = await isolatedDatabase('sqlite');
    try {
      const error = await startupFailure({ ...sqlite.options, synchronize: true, autoLoadEntities: true } as never, [
        OutboxModule.forRootAsync({ useFactory: () => ({ transport: new RecordingOutboxTransport(), delivery: 'wal' as const }) }),
      ]);
      expect(error).toBeInstanceOf(OutboxConfigurationError);
      expect(String(error)).toContain(`"delivery" is 'wal'`);
      expect(String(error)).toContain('PostgreSQL only');
    } finally {
      await sqlite.drop();
    }
  });

  describe('on PostgreSQL', () => {
    let sandbox: WalSandbox;
    const role = `wal_norepl_${randomBytes(4).toString('hex')}`;
    beforeAll(async () => {
      sandbox = await walSandbox('wal_refusals');
      await postgresAdmin(sandbox.url, `CREATE ROLE ${role} LOGIN NOSUPERUSER NOREPLICATION`);
      await postgresAdmin(sandbox.url, `GRANT ALL ON SCHEMA ${sandbox.schema} TO ${role}`);
    });
    afterAll(async () => {
      await sandbox?.drop();
      await postgresAdmin(sandbox.url, `DROP OWNED BY ${role}`).catch(() => undefined);
      await postgresAdmin(sandbox.url, `DROP ROLE IF EXISTS ${role}`);
    });

    it('refuses a role without REPLICATION, naming the ALTER ROLE to run, and creates no slot', async () => {
      const error = await sandbox.start({ transport: new RecordingOutboxTransport() }, { username: role }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OutboxConfigurationError);
      expect(String(error)).toContain(`ALTER ROLE "${role}" REPLICATION`);
      expect(await postgresAdmin(sandbox.url, `SELECT 1 FROM pg_replication_slots WHERE slot_name = '${sandbox.slotName}'`)).toBe(0);
    });

    it('creates the slot and publication on first start and keeps them after the app stops', async () => {
      const app = await sandbox.start({ transport: new RecordingOutboxTransport() });
      await app.close();
      expect(await postgresAdmin(sandbox.url, `SELECT 1 FROM pg_replication_slots WHERE slot_name = '${sandbox.slotName}' AND plugin = 'pgoutput'`)).toBe(1);
      expect(await postgresAdmin(sandbox.url, `SELECT 1 FROM pg_publication WHERE pubname = '${sandbox.slotName}'`)).toBe(1);
    });

    it('starts a write-only instance without REPLICATION once the slot exists; a relaying instance streams its events', async () => {
      const recording = new RecordingOutboxTransport();
      await sandbox.start({ transport: recording });
      await postgresAdmin(sandbox.url, `GRANT ALL ON ALL TABLES IN SCHEMA ${sandbox.schema} TO ${role}`);
      await postgresAdmin(sandbox.url, `GRANT ALL ON ALL SEQUENCES IN SCHEMA ${sandbox.schema} TO ${role}`);
      const writer = await sandbox.start({ relay: false }, { username: role });
      await writer.dataSource.transaction((manager) =>
        writer.publisher.add(manager, { type: 'parcel.noted', aggregateType: 'parcel', aggregateId: 'from-writer', payload: {}, topic: 'parcels' }),
      );
      await waitFor("the write-only instance's event streamed by the relaying one", () => recording.published.some((m) => m.key === 'from-writer'));
    });
  });
});
