import type { INestApplication, LoggerService, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { OutboxTenants } from '@nest-outbox/outbox/tenants';
import { OutboxTable } from '../../libs/outbox/src/sql/dialects/outbox-table';
import { tableDialectFor } from '../../libs/outbox/src/sql/outbox-sql.factory';
import { postgresAdmin } from '../support/databases';
import { silentLogger } from '../support/silent-logger';

const table = OutboxTable.on('postgres', { tableName: 'outbox_messages' });

/** Creates the database `name` on the server, with the outbox table in it: a tenant's. Returns its URL. */
export async function createTenantDatabase(server: string, name: string): Promise<string> {
  await postgresAdmin(server, `CREATE DATABASE ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  await createOutboxTable(url.toString());
  return url.toString();
}

/** The outbox table in the database at `url`. */
export async function createOutboxTable(url: string): Promise<void> {
  for (const sql of tableDialectFor('postgres', table).createTable()) await postgresAdmin(url, sql);
}

/** Drops the tenants' databases, with the connections still open to them. */
export async function dropTenantDatabases(server: string, names: Iterable<string>): Promise<void> {
  for (const name of names) await postgresAdmin(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

/**
 * Compiles and initializes an app module of tenant outboxes with `logger` (or, `listen`, serves it
 * over HTTP on a free port of 127.0.0.1): the app and its OutboxTenants.
 */
export async function startTenantsApp(module: Type, logger: LoggerService | false, options: { listen?: boolean } = {}): Promise<{ app: INestApplication; outboxes: OutboxTenants }> {
  const moduleRef = await Test.createTestingModule({ imports: [module] }).setLogger(logger === false ? silentLogger : logger).compile();
  const app = moduleRef.createNestApplication({ logger });
  if (options.listen) await app.listen(0, '127.0.0.1');
  else await app.init();
  return { app, outboxes: app.get(OutboxTenants) };
}
