import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..', '..', '..');

/**
 * Generates the Prisma client of `schema.prisma` into test/data-layers/.prisma-client (git-ignored)
 * and returns its entry file. Offline: `prisma generate` only checks that the schema engine named by
 * PRISMA_SCHEMA_ENGINE_BINARY exists (it does not run it), and the `prisma-client` generator with the
 * PrismaPg driver adapter needs no native engine. Tables come from plain SQL: `prisma migrate` would
 * need the engine.
 */
export function generatePrismaClient(provider: 'postgresql' | 'mysql' | 'sqlite' = 'postgresql'): string {
  // One schema per provider, each generating into its own folder (schema.mysql.prisma: `.prisma-client-mysql`, schema.sqlite.prisma: `.prisma-client-sqlite`).
  const schema = provider === 'postgresql' ? 'schema.prisma' : `schema.${provider}.prisma`;
  execFileSync(process.execPath, [join(root, 'node_modules', 'prisma', 'build', 'index.js'), 'generate', '--schema', join(__dirname, schema)], {
    cwd: root,
    env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath, CHECKPOINT_DISABLE: '1', PRISMA_HIDE_UPDATE_MESSAGE: '1' },
    stdio: 'pipe',
    timeout: 60_000,
  });
  return join(__dirname, '..', provider === 'postgresql' ? '.prisma-client' : `.prisma-client-${provider}`, 'client');
}
