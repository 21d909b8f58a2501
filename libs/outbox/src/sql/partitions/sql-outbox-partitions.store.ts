import { errorText } from '../../core/error-text';
import { partitionsFrom, type ResolvedPartitioning } from '../../core/partitioning/outbox-partitioning';
import type { OutboxPartitionStore, OutboxTableKind, PartitionsDropped, PartitionsMade } from '../../core/partitioning/outbox-partitions.port';
import type { SqlConnection } from '../../core/sql-connection.port';
import { OutboxTable } from '../dialects/outbox-table';
import { PartitionCatalogSql } from './partition-catalog.sql';
import { timePartition } from './partitioned-table.sql';

/**
 * Adding or removing a partition takes an ACCESS EXCLUSIVE lock on the outbox table for a few
 * catalog writes. Behind a long application transaction that lock would wait, and every insert and
 * claim would queue behind it; so it is given up quickly and the next cleanup run tries again.
 */
const LOCK_TIMEOUT = `SET LOCAL lock_timeout = '2s'`;

/** Kept apart from a failure: the rows changed between the check and the lock. */
class PartitionStillInUse extends Error {}

interface CatalogPartition {
  name: string;
  schema: string;
  from: Date | null;
  to: Date | null;
  expired: boolean;
}

export class SqlOutboxPartitionStore implements OutboxPartitionStore {
  private readonly sql: PartitionCatalogSql;

  constructor(
    private readonly connection: SqlConnection,
    private readonly table: OutboxTable,
    private readonly partitioning: ResolvedPartitioning,
  ) {
    this.sql = new PartitionCatalogSql(table);
  }

  async tableKind(): Promise<OutboxTableKind> {
    const [row] = (await this.connection.run(this.sql.tableKind())).records;
    return row === undefined ? 'missing' : row.kind === 'p' ? 'partitioned' : 'plain';
  }

  async makeAhead(at: Date = new Date()): Promise<PartitionsMade> {
    const existing = await this.partitions();
    const outcome: PartitionsMade = { made: [], failed: [] };
    for (const range of partitionsFrom(at, this.partitioning)) {
      // Any partition overlapping the range (ours or an operator's) stands for it.
      if (existing.some((p) => p.from !== null && p.to !== null && p.from < range.to && range.from < p.to)) continue;
      const partition = timePartition(this.table, range.suffix);
      try {
        await this.connection.transaction(async (run) => {
          await run({ sql: LOCK_TIMEOUT, params: [] });
          // PostgreSQL refuses it when the DEFAULT partition already holds rows of the range: they stay there, cleaned row by row.
          await run({ sql: this.sql.create(partition, range.from, range.to), params: [] });
        });
        outcome.made.push(partition.name);
      } catch (error) {
        outcome.failed.push({ partition: partition.name, error: errorText(error) });
      }
    }
    return outcome;
  }

  async dropExpired(publishedRetentionMs: number): Promise<PartitionsDropped> {
    const outcome: PartitionsDropped = { dropped: [], kept: [], failed: [] };
    for (const { name, schema } of (await this.partitions(publishedRetentionMs)).filter((p) => p.expired)) {
      try {
        // Named as the catalog has it: an operator may have made (or moved) a partition elsewhere.
        const partition = OutboxTable.of({ tableName: name, schema });
        // Checked first without the lock, over the partial indexes, so that a partition that must stay never takes it.
        if (await this.unsettled(partition, publishedRetentionMs, (statement) => this.connection.run(statement))) {
          outcome.kept.push(name);
          continue;
        }
        await this.connection.transaction(async (run) => {
          await run({ sql: LOCK_TIMEOUT, params: [] });
          await run({ sql: this.sql.detach(partition), params: [] });
          // Again under the lock: a requeue or a late outcome may have come in between.
          if (await this.unsettled(partition, publishedRetentionMs, run)) throw new PartitionStillInUse();
          await run({ sql: this.sql.drop(partition), params: [] });
        });
        outcome.dropped.push(name);
      } catch (error) {
        if (error instanceof PartitionStillInUse) outcome.kept.push(name);
        else outcome.failed.push({ partition: name, error: errorText(error) });
      }
    }
    return outcome;
  }

  private async unsettled(partition: OutboxTable, publishedRetentionMs: number, run: SqlConnection['run']): Promise<boolean> {
    const [row] = (await run(this.sql.unsettled(partition, publishedRetentionMs))).records;
    return row?.unsettled === true;
  }

  private async partitions(expiredAfterMs?: number): Promise<CatalogPartition[]> {
    const { records } = await this.connection.run(this.sql.partitions(expiredAfterMs));
    const time = (value: unknown) => (value === null || value === undefined ? null : new Date(value as string | Date));
    return records.map((row) => ({ name: String(row.name), schema: String(row.schema), from: time(row.from), to: time(row.to), expired: row.expired === true }));
  }
}
