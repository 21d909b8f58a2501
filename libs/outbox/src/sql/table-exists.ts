import type { SqlConnection } from '../core/sql-connection.port';

/** Whether `table` (a checked identifier) exists where unqualified statements find it: search_path, the current database, the file. */
export async function tableExists(connection: SqlConnection, table: string): Promise<boolean> {
  const statement =
    connection.dialect === 'postgres'
      ? { sql: `SELECT to_regclass($1) IS NOT NULL AS present`, params: [`"${table}"`] }
      : connection.dialect === 'mariadb'
        ? { sql: `SELECT COUNT(*) > 0 AS present FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?`, params: [table] }
        : { sql: `SELECT COUNT(*) > 0 AS present FROM sqlite_master WHERE type = 'table' AND name = ?`, params: [table] };
  const [row] = await connection.runner().rows(statement);
  return row?.present === true || Number(row?.present) === 1;
}
