import { OutboxConsole } from '../core/console/outbox-console';
import type { SqlConnection } from '../core/sql-connection.port';
import type { OutboxTable } from '../sql/dialects/outbox-table';
import { createSqlOutboxConsoleStore, createSqlOutboxMaintenanceStore } from '../sql/outbox-sql.factory';
import type { CliIo } from './cli-io';

/**
 * `nest-outbox show <id>`: one message as the console's detail shows it (JSON): status and times,
 * headers (a replay's reason, time and author among them), payload and error history.
 */
export async function showMessage(connection: SqlConnection, table: OutboxTable, id: string, io: CliIo): Promise<number> {
  const operator = new OutboxConsole(createSqlOutboxConsoleStore(connection, table), createSqlOutboxMaintenanceStore(connection, table));
  io.out(JSON.stringify(await operator.get(id), null, 2));
  return 0;
}
