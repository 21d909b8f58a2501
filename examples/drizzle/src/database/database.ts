import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { fileURLToPath } from 'node:url';
import { Pool } from 'pg';
import { settings } from '../settings.js';
import * as schema from './schema.js';

/** One pool for Drizzle and the outbox relay (`OutboxModule.forRoot({ connection: { pool } })`). */
export const pool = new Pool({ connectionString: settings.databaseUrl, max: 10 });
export const db = drizzle(pool, { schema });
export type Database = typeof db;

/** drizzle/ holds the app's migrations and the outbox's custom one, in the order of its journal. */
export async function migrateDatabase(): Promise<void> {
  await migrate(db, { migrationsFolder: fileURLToPath(new URL('../../drizzle', import.meta.url)) });
}
