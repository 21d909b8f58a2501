import { OutboxConfigurationError } from '../../core/outbox.errors';
import { unsupportedDatabase } from '../../core/outbox.messages';
import type { SqlDialectName } from '../../core/sql-transaction.port';

/** The TypeORM driver types the outbox runs on, by SQL family. */
export function sqlDialectOf(driverType: string): SqlDialectName {
  if (driverType === 'postgres') return 'postgres';
  if (driverType === 'mariadb' || driverType === 'mysql') return 'mariadb';
  if (driverType === 'better-sqlite3') return 'sqlite';
  throw new OutboxConfigurationError(unsupportedDatabase(driverType));
}
