import { existsSync } from 'node:fs';
import { openConnection, type OpenedConnection } from '../adapters/connection/open-connection';
import { resolveConnectionOption } from '../adapters/connection/outbox-connection.options';
import { badUrl, cannotConnect, noSqliteFile } from './cli.messages';
import { CliError } from './cli.error';

/**
 * A connection for a database URL: `postgres(ql)://…` (pg), `mysql://…` / `mariadb://…` (mysql2), or
 * `sqlite:<path>` (also `sqlite://<path>`; better-sqlite3), the same the module opens for
 * `connection: { url }`: the CLI needs no TypeORM. Connected once here, so that a wrong host fails now.
 */
export async function connect(url: string): Promise<OpenedConnection> {
  if (!/^(postgres(ql)?|mysql|mariadb):\/\/[^/]+/.test(url) && !/^sqlite:(?:\/\/)?.+$/.test(url)) throw new CliError(badUrl(url));
  const sqlite = /^sqlite:(?:\/\/)?(.+)$/.exec(url);
  if (sqlite && !existsSync(sqlite[1])) throw new CliError(noSqliteFile(sqlite[1]));
  // Two connections are plenty for a command; fail fast instead of waiting on a dead host.
  const opened = openConnection(resolveConnectionOption({ url, poolSize: 2 }), { connectTimeoutMs: 5_000 });
  try {
    await opened.connection.run({ sql: 'SELECT 1', params: [] });
  } catch (error) {
    await opened.close().catch(() => undefined);
    throw new CliError(cannotConnect(url, error instanceof Error ? error.message : String(error)));
  }
  return opened;
}
