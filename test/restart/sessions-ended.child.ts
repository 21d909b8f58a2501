/**
 * Opens the outbox's connection to a database as the `connection` option does (a URL, or the app's
 * own pg Pool), then has the server end every session of the pool's idle clients, as a restart does
 * (57P01), several times over. An error nobody handles ends this process; the parent checks that it
 * printed `survived` and exited 0. Settings in SESSIONS_ENDED: { url, database, given }.
 */
import { Client, Pool } from 'pg';
import { openConnection } from '../../libs/outbox/src/adapters/connection/open-connection';
import { resolveConnectionOption } from '../../libs/outbox/src/adapters/connection/outbox-connection.options';

const { url, database, given } = JSON.parse(process.env.SESSIONS_ENDED ?? '{}') as { url: string; database: string; given: boolean };
const ROUNDS = 5;

async function main(): Promise<void> {
  const appPool = given ? new Pool({ connectionString: url, max: 4 }) : undefined;
  const target = resolveConnectionOption(appPool ? { pool: appPool } : { url, poolSize: 4 });
  const { connection, close } = openConnection(target, { logger: { warn: (message) => console.log(`WARN ${message}`) } });
  const admin = new Client({ connectionString: url });
  await admin.connect();
  for (let round = 0; round < ROUNDS; round++) {
    await Promise.all([1, 2, 3, 4].map(() => connection.run({ sql: 'SELECT pg_sleep(0.05)', params: [] })));
    const ended = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
    if (ended.rowCount === 0) throw new Error('no session to end');
    // The ended clients' errors arrive on their sockets; give them the time to.
    await new Promise((resolve) => setTimeout(resolve, 100));
    await connection.run({ sql: 'SELECT 1', params: [] });
  }
  await admin.end();
  await close();
  await appPool?.end();
  console.log('survived');
}

main().catch((error: unknown) => {
  console.log(`failed: ${String(error)}`);
  process.exit(2);
});
