import type { PublishedCount, StreamPositionStore } from '../core/stream/stream-position.port';
import { StreamedCounts } from '../sql/streamed-counts';
import { formatLsn, parseLsn } from '../core/stream/stream-message';
import type { SqlConnection } from '../core/sql-connection.port';
import { OutboxTable, type OutboxTableLocation } from '../sql/dialects/outbox-table';

/**
 * The stream's saved positions, one row per slot, in `<outbox table>_wal_positions` beside the
 * outbox table. The WAL mode creates the table when it prepares its slot (as it creates the slot
 * and the publication), and forgets a slot's row whenever it creates that slot anew: a position of
 * a dropped slot, or of a server the database was restored from, must never skip a new slot's commits.
 */
export class WalPositionTable implements StreamPositionStore {
  private readonly table: string;
  private readonly saveSql: string;
  private readonly countSql: string;
  private readonly pruneSql: string;
  private readonly readSql: string;
  private prunedAt = 0;

  constructor(
    private readonly connection: SqlConnection,
    location: string | OutboxTableLocation,
    private readonly slotName: string,
  ) {
    const outbox = OutboxTable.on('postgres', location);
    this.table = outbox.walPositions.quoted();
    this.readSql = WalPositionTable.readStatement(location);
    this.countSql = StreamedCounts.addStatement(outbox);
    this.pruneSql = StreamedCounts.pruneStatement(outbox);
    // synchronous_commit on for this one statement's transaction: the point of the row is to
    // survive a crash, whatever the application set for its own transactions.
    this.saveSql = `INSERT INTO ${this.table} AS p (slot_name, confirmed_lsn, saved_at) VALUES ($1, $2::pg_lsn, now())
      ON CONFLICT (slot_name) DO UPDATE SET confirmed_lsn = excluded.confirmed_lsn, saved_at = excluded.saved_at
      WHERE p.confirmed_lsn < excluded.confirmed_lsn`;
  }

  /** The DDL of this table and of the streamed counts', run by the WAL mode's set-up (idempotent). */
  static createStatements(location: string | OutboxTableLocation): string[] {
    const outbox = OutboxTable.on('postgres', location);
    return [
      `CREATE TABLE IF NOT EXISTS ${outbox.walPositions.quoted()} (slot_name text PRIMARY KEY, confirmed_lsn pg_lsn NOT NULL, saved_at timestamptz NOT NULL)`,
      StreamedCounts.createStatement(outbox),
    ];
  }

  /** Reads a slot's saved position as text (`lsn`), $1 the slot: read before the slot is made anew. */
  static readStatement(location: string | OutboxTableLocation): string {
    return `SELECT confirmed_lsn::text AS lsn FROM ${OutboxTable.on('postgres', location).walPositions.quoted()} WHERE slot_name = $1`;
  }

  /** Forgets a slot's position: run before that slot is created. */
  static forgetStatement(location: string | OutboxTableLocation): string {
    return `DELETE FROM ${OutboxTable.on('postgres', location).walPositions.quoted()} WHERE slot_name = $1`;
  }

  async read(): Promise<bigint | undefined> {
    const { records } = await this.connection.run({ sql: this.readSql, params: [this.slotName] });
    const lsn = records[0]?.lsn;
    return typeof lsn === 'string' ? parseLsn(lsn) : undefined;
  }

  async save(lsn: bigint, published: readonly PublishedCount[]): Promise<void> {
    // Old counts go now and then, in a save of their own: never more than one DELETE in ten minutes.
    const prune = Date.now() - this.prunedAt > 600_000;
    await this.connection.transaction(async (run) => {
      await run({ sql: `SET LOCAL synchronous_commit TO on`, params: [] });
      await run({ sql: this.saveSql, params: [this.slotName, formatLsn(lsn)] });
      if (published.length > 0) {
        await run({ sql: this.countSql, params: [published.map((p) => p.transport), published.map((p) => p.destination), published.map((p) => p.count)] });
      }
      if (prune) await run({ sql: this.pruneSql, params: [] });
    });
    if (prune) this.prunedAt = Date.now();
  }
}
