import type { SqlConnection } from '../core/sql-connection.port';
import type { StreamMessage } from '../core/stream/stream-message';
import type { StreamOwnedRows } from '../sql/dialects/stream-owned-rows.sql';
import { runUntilVisible, visibleInSnapshot } from './visible-commits';

type OwnedRow = NonNullable<StreamMessage['row']>;

/**
 * The stream's own rows (`wal.write: 'row'`) that the broker acknowledged, deleted in one statement
 * before the slot is confirmed past them. A delete that fails keeps its rows for the next one, and
 * the confirmation waits: were the slot confirmed first, a row left behind would be read by no one.
 * For the same reason the delete is run again until its snapshot sees the rows' commits (the stream
 * may have them, and the broker acknowledge them, before other sessions see them).
 */
export class StreamRowSettlement {
  private acknowledgedRows: OwnedRow[] = [];

  constructor(
    private readonly connection: SqlConnection,
    private readonly rows: StreamOwnedRows,
  ) {}

  acknowledged(messages: readonly StreamMessage[]): void {
    for (const message of messages) if (message.row !== undefined) this.acknowledgedRows.push(message.row);
  }

  async settle(): Promise<void> {
    if (this.acknowledgedRows.length === 0) return;
    const rows = this.acknowledgedRows;
    this.acknowledgedRows = [];
    try {
      await runUntilVisible(this.connection, this.rows.settle(rows, visibleInSnapshot), rows.map((row) => row.xid));
    } catch (error) {
      this.acknowledgedRows = rows.concat(this.acknowledgedRows);
      throw error;
    }
  }
}
