import type { SqlConnection } from '../core/sql-connection.port';
import type { StreamMessage } from '../core/stream/stream-message';
import type { StreamOwnedRows } from '../sql/dialects/stream-owned-rows.sql';

/**
 * The stream's own rows (`wal.write: 'row'`) that the broker acknowledged, deleted in one statement
 * before the slot is confirmed past them. A delete that fails keeps its rows for the next one, and
 * the confirmation waits: were the slot confirmed first, a row left behind would be read by no one.
 */
export class StreamRowSettlement {
  private acknowledgedRows: string[] = [];

  constructor(
    private readonly connection: SqlConnection,
    private readonly rows: StreamOwnedRows,
  ) {}

  acknowledged(messages: readonly StreamMessage[]): void {
    for (const message of messages) if (message.row !== undefined) this.acknowledgedRows.push(message.row);
  }

  async settle(): Promise<void> {
    if (this.acknowledgedRows.length === 0) return;
    const positions = this.acknowledgedRows;
    this.acknowledgedRows = [];
    try {
      await this.connection.run(this.rows.settle(positions));
    } catch (error) {
      this.acknowledgedRows = positions.concat(this.acknowledgedRows);
      throw error;
    }
  }
}
