import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { outboxDdl, outboxSqlScript, type OutboxDdlDialect, type OutboxDdlTable } from './outbox-ddl';

const DIALECTS: readonly OutboxDdlDialect[] = ['postgres', 'mariadb', 'sqlite'];
const TABLES: readonly OutboxDdlTable[] = ['outbox', 'inbox', 'poison'];

/** The SQL files of the package: `<dialect>/<table>.up.sql` and `.down.sql`, default names, relative to the folder they go in. */
export function sqlFiles(): { path: string; contents: string }[] {
  return DIALECTS.flatMap((dialect) =>
    TABLES.flatMap((table) => {
      const ddl = outboxDdl({ dialect, tables: [table] });
      const header = `-- nest-outbox: the ${table} table${table === 'outbox' ? 's' : ''} on ${dialect}, default names. Other names: nest-outbox sql --help.\n\n`;
      return [
        { path: join(dialect, `${table}.up.sql`), contents: header + outboxSqlScript(ddl.up) },
        { path: join(dialect, `${table}.down.sql`), contents: header + outboxSqlScript(ddl.down) },
      ];
    }),
  );
}

/**
 * Writes the SQL files into `folder` (the package build puts them in `dist/ddl`, exported as `@nest-outbox/outbox/ddl/*`): the DDL for a
 * reader or a tool that takes files, made from `outboxDdl` at build time, so no copy is kept in git.
 */
export function writeSqlFiles(folder: string): void {
  for (const file of sqlFiles()) {
    mkdirSync(join(folder, file.path, '..'), { recursive: true });
    writeFileSync(join(folder, file.path), file.contents);
  }
}
