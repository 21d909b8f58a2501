/** The texts of the partitioned outbox table, each naming what is wrong and what to do. */

export const partitionNameTooLong = (table: string, max: number) =>
  `The outbox table "${table}" cannot be partitioned: its partitions are named "${table}_p2026112613" and "${table}_default", ` +
  `longer than PostgreSQL's 63 characters. Give the table a name of at most ${max} characters.`;

export const partitioningNeedsPostgres = (database: string) =>
  `OutboxModule option "partitioning" needs PostgreSQL (declarative partitions), but the outbox is on ${database}. ` +
  `Remove "partitioning"; cleanup there deletes settled rows in batches.`;

export const partitioningNeedsTableDelivery = () =>
  `OutboxModule options "partitioning" and "delivery" cannot work together: in delivery 'wal' the outbox table only holds the ` +
  `stream's overflow (a few rows that failed to publish) and its publication would have to publish a partitioned table's rows ` +
  `under the partitions' names. Remove "partitioning" with delivery 'wal'.`;

export const tableNotPartitioned = (table: string, kind: 'plain' | 'missing') =>
  kind === 'missing'
    ? `OutboxModule option "partitioning" is set, but the outbox table "${table}" does not exist. Run the outbox migration with the same ` +
      `partitioning (createOutboxTableMigration({ tableName, partitioning }), or outboxDdl({ dialect: 'postgres', partitioning })) first.`
    : `OutboxModule option "partitioning" is set, but the outbox table "${table}" is a plain table: PostgreSQL cannot turn a table ` +
      `into a partitioned one in place. Remove "partitioning", or move over as docs/operating.md shows ` +
      `("A partitioned outbox table", "From a plain table"): with the app stopped, create a partitioned table under a new tableName ` +
      `with the migration, copy the unsettled rows across, and start with that tableName.`;

export const partitionNotMade = (partition: string, error: string) =>
  `Outbox partition ${partition} could not be made ahead (the next cleanup run tries again; rows meanwhile land in the DEFAULT partition, none is lost): ${error}`;

export const partitionNotDropped = (partition: string, error: string) =>
  `Outbox partition ${partition} could not be dropped (the next cleanup run tries again): ${error}`;
