import type { StreamPositionStore } from '../../core/stream/stream-position.port';
import { formatLsn, parseLsn } from '../../core/stream/stream-message';
import type { SqlConnection } from '../sql-connection.port';
import { OutboxTable, type OutboxTableLocation } from '../dialects/outbox-table';

/**
 * The stream's saved positions, one row per slot, in `<outbox table>_wal_positions` beside the
 * outbox table. The WAL mode creates the table when it prepares its slot (as it creates the slot
 * and the publication), and forgets a slot's row whenever it creates that slot anew: a position of
 * a dropped slot, or of a server the database was restored from, must never skip a new slot's commits.
 */
export class WalPositionTable implements StreamPositionStore {
  private readonly table: string;
  private readonly saveSql: string;

  constructor(
    private readonly connection: SqlConnection,
    location: string | OutboxTableLocation,
    private readonly slotName: string,
  ) {
    this.table = OutboxTable.on('postgres', location).walPositions.quoted();
    // synchronous_commit on for this one statement's transaction: the point of the row is to
    // survive a crash, whatever the application set for its own transactions.
    this.saveSql = `INSERT INTO ${this.table} AS p (slot_name, confirmed_lsn, saved_at) VALUES ($1, $2::pg_lsn, now())
      ON CONFLICT (slot_name) DO UPDATE SET confirmed_lsn = excluded.confirmed_lsn, saved_at = excluded.saved_at
      WHERE p.confirmed_lsn < excluded.confirmed_lsn`;
  }

  /** The table's DDL, run by the WAL mode's set-up (idempotent). */
  static createStatement(location: string | OutboxTableLocation): string {
    const table = OutboxTable.on('postgres', location).walPositions.quoted();
    return `CREATE TABLE IF NOT EXISTS ${table} (slot_name text PRIMARY KEY, confirmed_lsn pg_lsn NOT NULL, saved_at timestamptz NOT NULL)`;
  }

  /** Forgets a slot's position: run before that slot is created. */
  static forgetStatement(location: string | OutboxTableLocation): string {
    return `DELETE FROM ${OutboxTable.on('postgres', location).walPositions.quoted()} WHERE slot_name = $1`;
  }

  async read(): Promise<bigint | undefined> {
    const { records } = await this.connection.run({ sql: `SELECT confirmed_lsn::text AS lsn FROM ${this.table} WHERE slot_name = $1`, params: [this.slotName] });
    const lsn = records[0]?.lsn;
    return typeof lsn === 'string' ? parseLsn(lsn) : undefined;
  }

  async save(lsn: bigint): Promise<void> {
    await this.connection.transaction(async (run) => {
      await run({ sql: `SET LOCAL synchronous_commit TO on`, params: [] });
      await run({ sql: this.saveSql, params: [this.slotName, formatLsn(lsn)] });
    });
  }
}
