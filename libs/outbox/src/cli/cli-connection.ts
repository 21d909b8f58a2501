import { existsSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { badUrl, cannotConnect, noSqliteFile } from './cli.messages';
import { CliError } from './cli.error';

/** A data source for a database URL: `postgres(ql)://…`, `mysql://…` / `mariadb://…`, or `sqlite:<path>` (also `sqlite://<path>`). */
export async function connect(url: string): Promise<DataSource> {
  const dataSource = new DataSource(optionsFor(url));
  try {
    await dataSource.initialize();
  } catch (error) {
    throw new CliError(cannotConnect(url, error instanceof Error ? error.message : String(error)));
  }
  return dataSource;
}

function optionsFor(url: string): ConstructorParameters<typeof DataSource>[0] {
  if (/^postgres(ql)?:\/\/[^/]+/.test(url)) {
    return {
      type: 'postgres',
      url,
      // One connection is plenty for a command; fail fast instead of waiting on a dead host.
      extra: { max: 2, connectionTimeoutMillis: 5_000 },
      logging: false,
    };
  }
  if (/^(mysql|mariadb):\/\/[^/]+/.test(url)) {
    return { type: 'mariadb', url: url.replace(/^mariadb:/, 'mysql:'), connectTimeout: 5_000, logging: false };
  }
  const sqlite = /^sqlite:(?:\/\/)?(.+)$/.exec(url);
  if (sqlite) {
    const path = sqlite[1];
    if (!existsSync(path)) throw new CliError(noSqliteFile(path));
    return { type: 'better-sqlite3', database: path, fileMustExist: true, logging: false };
  }
  throw new CliError(badUrl(url));
}
