import type { ReplicationConnectionConfig } from './pg-logical-replication.loader';
import type { SqlConnection } from '../core/sql-connection.port';

/**
 * The replication connection's settings: those of the connection's own pool (TypeORM's, or the pg Pool given: url or host, user,
 * password, database, ssl), so that the stream reads the database the app writes to.
 */
export function replicationConnection(connection: SqlConnection): ReplicationConnectionConfig {
  const from = (connection.connectionConfig ?? {}) as ReplicationConnectionConfig;
  const { connectionString, host, port, user, password, database, ssl } = from;
  return { connectionString, host, port, user, password, database, ssl, application_name: 'nest-outbox-wal' };
}
