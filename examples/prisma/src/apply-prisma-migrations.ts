// Applies prisma/migrations/*/migration.sql where `prisma migrate deploy` cannot run (its native
// schema engine is missing, as offline) and records each one in _prisma_migrations as that command
// does: its table, the folder's name, the file's SHA-256. Each file runs in one transaction with its
// record, so a failed one leaves nothing behind. From the app's folder, after `npm run build`:
//   DATABASE_URL=postgres://… node dist/apply-prisma-migrations.js
import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

const folder = 'prisma/migrations';
if (!process.env.DATABASE_URL) throw new Error('Set DATABASE_URL (postgres://…) to the database to migrate.');
const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
await client.connect();
try {
  // Prisma Migrate's lock and table: the two never run at once, and each sees what the other applied.
  await client.query('SELECT pg_advisory_lock(72707369)');
  await client.query(`CREATE TABLE IF NOT EXISTS _prisma_migrations (
    id varchar(36) PRIMARY KEY NOT NULL,
    checksum varchar(64) NOT NULL,
    finished_at timestamptz,
    migration_name varchar(255) NOT NULL,
    logs text,
    rolled_back_at timestamptz,
    started_at timestamptz NOT NULL DEFAULT now(),
    applied_steps_count integer NOT NULL DEFAULT 0
  )`);
  const done = await client.query<{ migration_name: string }>('SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL');
  const applied = new Set(done.rows.map((row) => row.migration_name));
  const pending = readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !applied.has(entry.name))
    .map((entry) => entry.name)
    .sort();
  for (const name of pending) {
    const sql = readFileSync(join(folder, name, 'migration.sql'), 'utf8');
    await client.query('BEGIN');
    try {
      await client.query(sql);
      const checksum = createHash('sha256').update(sql).digest('hex');
      await client.query('INSERT INTO _prisma_migrations (id, checksum, migration_name, finished_at, applied_steps_count) VALUES ($1, $2, $3, now(), 1)', [randomUUID(), checksum, name]);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw new Error(`${name}/migration.sql failed and was rolled back: ${(error as Error).message}`, { cause: error });
    }
    console.log(`Applied ${name}`);
  }
  console.log(`${pending.length} migration(s) applied, ${applied.size} applied before.`);
} finally {
  await client.end();
}
