import type { ReplicationConnectionConfig } from '../../postgres-wal/pg-logical-replication.loader';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/**
 * The replication connection's settings: those of the data source's own pool (url or host, user,
 * password, database, ssl), so that the stream reads the database the app writes to.
 */
export function replicationConnection(dataSource: DataSource): ReplicationConnectionConfig {
  const pool = (dataSource.driver as PostgresDriver).master as { options?: ReplicationConnectionConfig } | undefined;
  const from = pool?.options ?? {};
  const { connectionString, host, port, user, password, database, ssl } = from;
  return { connectionString, host, port, user, password, database, ssl, application_name: 'nest-outbox-wal' };
}
