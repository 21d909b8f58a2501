import type { SqlStatement } from '../../core/sql-connection.port';
import type { OutboxTable } from '../dialects/outbox-table';
import { OUTBOX_STORAGE } from '../dialects/postgres-storage';

/** The statements of partition maintenance; the names in them are validated identifiers. */
export class PartitionCatalogSql {
  constructor(private readonly table: OutboxTable) {}

  /** `p` partitioned, `r` plain, no row: missing. */
  tableKind(): SqlStatement {
    return { sql: `SELECT relkind::text AS kind FROM pg_class WHERE oid = to_regclass($1)`, params: [this.table.quoted()] };
  }

  /**
   * The partitions with their bounds, read back from the catalog as timestamps (the bound's text is in
   * the session's time zone, with its offset, so the cast is exact), and whether each ended more than
   * `$2` ms ago. The DEFAULT partition and any bound not of the form FROM (…) TO (…) come back without bounds.
   */
  partitions(expiredAfterMs = 0): SqlStatement {
    return {
      sql: `SELECT c.relname AS name, n.nspname AS schema, b.bound[1]::timestamptz AS "from", b.bound[2]::timestamptz AS "to",
              COALESCE(b.bound[2]::timestamptz <= now() - $2 * interval '1 millisecond', false) AS expired
            FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            CROSS JOIN LATERAL (SELECT regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\) TO \\(''([^'']+)''\\)') AS bound) b
            WHERE i.inhparent = to_regclass($1)
            ORDER BY b.bound[1]::timestamptz NULLS FIRST`,
      params: [this.table.quoted(), expiredAfterMs],
    };
  }

  create(partition: OutboxTable, from: Date, to: Date): string {
    return `CREATE TABLE IF NOT EXISTS ${partition.quoted()} PARTITION OF ${this.table.quoted()} FOR VALUES FROM ('${from.toISOString()}') TO ('${to.toISOString()}') WITH (${OUTBOX_STORAGE})`;
  }

  /**
   * Whether the partition holds a row that must not be dropped: pending (leased or not), dead or
   * discarded, or published less than `$1` ms ago. Each test is served by a partial index of the table.
   */
  unsettled(partition: OutboxTable, publishedRetentionMs: number): SqlStatement {
    const p = partition.quoted();
    return {
      sql: `SELECT EXISTS (SELECT 1 FROM ${p} WHERE status = 'pending')
              OR EXISTS (SELECT 1 FROM ${p} WHERE status IN ('dead', 'discarded'))
              OR EXISTS (SELECT 1 FROM ${p} WHERE status = 'published' AND published_at >= now() - $1 * interval '1 millisecond') AS unsettled`,
      params: [publishedRetentionMs],
    };
  }

  detach(partition: OutboxTable): string {
    return `ALTER TABLE ${this.table.quoted()} DETACH PARTITION ${partition.quoted()}`;
  }

  drop(partition: OutboxTable): string {
    return `DROP TABLE ${partition.quoted()}`;
  }
}
