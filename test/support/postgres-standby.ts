import { postgresRows } from './databases';
import { PrivatePostgres } from './private-postgres';
import { waitFor } from './wait-for';

/**
 * A physical standby of a PrivatePostgres, for failover tests: a base backup of the primary on a
 * port of its own, replaying the primary's WAL until promote() makes it a primary itself. It is a
 * PrivatePostgres too, so port, url(), end(), begin() and cleanup() work on it the same way.
 *
 * A failover here loses what it loses in production: pg_basebackup leaves the replication slots
 * out, so a logical slot of the old primary does not exist on the promoted standby.
 */
export class PostgresStandby extends PrivatePostgres {
  private constructor(dir: string, port: number, bin: string, readonly primary: PrivatePostgres) {
    super(dir, port, bin);
  }

  /**
   * Copies the running `primary` and starts the copy as its standby; resolves once the standby is in
   * recovery and has replayed everything the primary had written. Leaves nothing behind if it fails.
   */
  static async of(primary: PrivatePostgres, label = 'standby'): Promise<PostgresStandby> {
    const standby = new PostgresStandby(...(await PrivatePostgres.newServerDir(label)), primary);
    try {
      // -R writes standby.signal and the primary_conninfo to follow; -X stream brings the WAL written
      // during the copy along, so the copy is consistent on its own. The primary's pg_hba (initdb's,
      // trust) already lets replication connections from 127.0.0.1 in; it runs wal_level=logical and
      // max_wal_senders=10, and the standby starts with the same settings, as hot standby requires.
      await standby.asPostgres('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-R', '-X', 'stream', '-c', 'fast', '--no-sync', '-D', standby.dataDir]);
      await standby.begin();
      // Without standby.signal the copy would have come up as a second primary: nothing to fail over to.
      await waitFor(`the standby on port ${standby.port} to be in recovery`, () => standby.inRecovery());
      await standby.caughtUp();
      return standby;
    } catch (error) {
      await standby.cleanup();
      throw error;
    }
  }

  /** Waits until the standby has replayed the primary's WAL up to where the primary stands now: every commit made before the call is on the standby. */
  async caughtUp(timeoutMs = 15_000): Promise<void> {
    const [{ lsn }] = await postgresRows(this.primary.url(), 'SELECT pg_current_wal_lsn()::text AS lsn');
    await waitFor(
      `the standby on port ${this.port} to replay the primary's WAL up to ${lsn}`,
      async () => (await postgresRows(this.url(), `SELECT pg_last_wal_replay_lsn() >= '${lsn}'::pg_lsn AS replayed`))[0].replayed === true,
      timeoutMs,
    );
  }

  /** Makes the standby a primary (it stops following the old one, which may be down) and waits until it takes writes. */
  async promote(timeoutMs = 15_000): Promise<void> {
    // -W: pg_ctl returns at once; the wait below has a deadline and names what it waited for.
    await this.asPostgres('pg_ctl', ['-D', this.dataDir, '-W', 'promote']);
    await waitFor(`the standby on port ${this.port} to leave recovery after promotion`, async () => !(await this.inRecovery()), timeoutMs);
  }

  private async inRecovery(): Promise<boolean> {
    const [{ recovering }] = await postgresRows(this.url(), 'SELECT pg_is_in_recovery() AS recovering');
    return recovering === true;
  }
}
