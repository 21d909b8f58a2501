import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { postgresAdmin } from '../support/databases';
import { requireService } from '../support/services';

const run = promisify(execFile);

/**
 * The `connection` option's pools (a URL the module opens, or the app's pg Pool) when the server ends
 * their idle sessions, as a restart does: pg-pool emits such a client's error on the pool, and a pool
 * nobody listens to ends the process. Without the guard the child died in the first round.
 */
describe('the connection option\'s pg pool when the server ends its sessions', () => {
  const url = requireService('postgres');
  const database = `sessions_ended_${randomBytes(4).toString('hex')}`;
  const databaseUrl = url.replace(/\/[^/]*$/, `/${database}`);

  beforeAll(async () => {
    await postgresAdmin(url, `CREATE DATABASE ${database}`);
  });

  afterAll(async () => {
    await postgresAdmin(url, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  });

  it.each([
    ['a URL the module opens', false],
    ["the app's own pg Pool", true],
  ])('%s: the process lives on, says so once, and the pool serves again', async (_, given) => {
    const { stdout } = await run(process.execPath, ['-r', join(__dirname, '..', 'support', 'ts-child.register.cjs'), join(__dirname, 'sessions-ended.child.ts')], {
      env: { ...process.env, SESSIONS_ENDED: JSON.stringify({ url: databaseUrl, database, given }) },
      timeout: 60_000,
    }).catch((error: { code?: number; stdout?: string; stderr?: string }) => {
      throw new Error(`the child ended with ${error.code}: ${error.stdout ?? ''}${(error.stderr ?? '').split('\n').slice(0, 12).join('\n')}`);
    });
    const lines = stdout.split('\n').filter(Boolean);
    expect(lines.at(-1)).toBe('survived');
    // 5 rounds of 4 ended sessions: one warning (the summary comes only after 10 s).
    expect(lines.filter((line) => line.startsWith('WARN')).length).toBe(1);
  });
});
