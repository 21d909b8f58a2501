import { OutboxConfigurationError } from '../../core/outbox.errors';
import { PARTITION_SUFFIX_LENGTH, type PartitionInterval, type ResolvedPartitioning } from '../../core/partitioning/outbox-partitioning';
import { partitionNameTooLong } from '../../core/partitioning/partitioning.messages';
import type { OutboxTable } from '../dialects/outbox-table';
import { OUTBOX_STORAGE } from '../dialects/postgres-storage';

/** The `to_char` pattern of a partition's name suffix: the same as `partitionsFrom` makes in TypeScript. */
const NAME_STAMP: Record<PartitionInterval, string> = { day: 'YYYYMMDD', hour: 'YYYYMMDDHH24' };

/** The table that takes rows no time partition covers, `<name>_default`. */
export function defaultPartition(table: OutboxTable): OutboxTable {
  return table.sibling(`${table.name}_default`);
}

/** A time partition, `<name>_<suffix>` (suffix `p20261126` or `p2026112613`). */
export function timePartition(table: OutboxTable, suffix: string): OutboxTable {
  return table.sibling(`${table.name}_${suffix}`);
}

/**
 * The partitioned form of the outbox table's DDL, around the same columns as the plain table.
 * PostgreSQL wants the partition key in every unique constraint, so the primary key is
 * `(position, created_at)` and the id's is `(id, created_at)`: `position` stays unique (an identity
 * never repeats), and ids are made unique by their writer (UUIDs), the constraint only ever caught a
 * bug. Lookups by position or id stay exact; they probe each partition's index.
 */
export function partitionedTableDdl(table: OutboxTable, columns: string, partitioning: ResolvedPartitioning): string[] {
  if (table.name.length + PARTITION_SUFFIX_LENGTH > 63) throw new OutboxConfigurationError(partitionNameTooLong(table.name, 63 - PARTITION_SUFFIX_LENGTH));
  const t = table.quoted();
  const part = (suffix: string) => table.quotedPart(suffix);
  const { interval, ahead } = partitioning;
  // The storage parameters go on each partition: a partitioned table holds no pages of its own.
  const schemaPrefix = table.schema === undefined ? '' : `"${table.schema}".`;
  return [
    `CREATE TABLE ${t} (
        position bigint GENERATED ALWAYS AS IDENTITY,
${columns},
        CONSTRAINT ${part('pkey')} PRIMARY KEY (position, created_at),
        CONSTRAINT ${part('id_key')} UNIQUE (id, created_at),
        CONSTRAINT ${part('status_check')} CHECK (status IN ('pending', 'published', 'dead', 'discarded')))
      PARTITION BY RANGE (created_at)`,
    // An insert never fails for want of a partition: rows no partition covers land here.
    `CREATE TABLE ${defaultPartition(table).quoted()} PARTITION OF ${t} DEFAULT WITH (${OUTBOX_STORAGE})`,
    // The current partition and `ahead` more, in UTC; cleanup runs make the later ones.
    `DO $$
      DECLARE
        start timestamptz := date_trunc('${interval}', now(), 'UTC');
        slot timestamptz;
      BEGIN
        FOR i IN 0..${ahead} LOOP
          slot := start + i * interval '1 ${interval}';
          EXECUTE format('CREATE TABLE IF NOT EXISTS ${schemaPrefix.replace(/%/g, '%%')}%I PARTITION OF ${t} FOR VALUES FROM (%L) TO (%L) WITH (${OUTBOX_STORAGE})',
            '${table.name}_p' || to_char(slot AT TIME ZONE 'UTC', '${NAME_STAMP[interval]}'), slot, slot + interval '1 ${interval}');
        END LOOP;
      END $$`,
  ];
}
