import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, chmodSync, chownSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freeRestartablePort } from './free-port';

const run = promisify(execFile);

/** The newest PostgreSQL server binaries installed from Debian's packages (scripts/services/postgres.sh uses the same). */
function pgBinDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl'))) : [];
  if (versions.length === 0) {
    throw new Error('No PostgreSQL server binaries under /usr/lib/postgresql: install them with "bash scripts/services.sh up postgres" (it installs postgresql-15), then run the test again.');
  }
  return join(root, versions.sort((a, b) => Number(a) - Number(b)).at(-1)!, 'bin');
}

/**
 * A PostgreSQL server of the test's own, on a free port in a temp dir, for tests that stop or
 * restart the server: the shared one of scripts/services.sh stays up for the tests beside it.
 * Started like that one (trust auth, wal_level=logical, durability defaults). Needs root (initdb
 * runs as the user postgres, which refuses root itself).
 */
export class PrivatePostgres {
  protected constructor(
    readonly dir: string,
    readonly port: number,
    private readonly bin: string,
  ) {}

  static async start(label = 'test'): Promise<PrivatePostgres> {
    const server = new PrivatePostgres(...(await PrivatePostgres.newServerDir(label)));
    await server.asPostgres('initdb', ['-D', server.dataDir, '--no-sync', '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C.UTF-8']);
    await server.begin();
    return server;
  }

  /** What a server needs before its data dir is filled (by initdb here, by a base backup for a standby): a dir the user postgres owns, a port, the binaries. */
  protected static async newServerDir(label: string): Promise<[dir: string, port: number, bin: string]> {
    if (userInfo().uid !== 0) throw new Error(`A private PostgreSQL server (${label}) needs root: initdb and pg_ctl run as the user postgres.`);
    const bin = pgBinDir();
    // /tmp lets every user through; the dir itself must too, for the user postgres.
    const dir = mkdtempSync(join('/tmp', `outbox-pg-${label}-`));
    chmodSync(dir, 0o755);
    mkdirSync(join(dir, 'sock'));
    const { uid, gid } = await postgresUser();
    chownSync(dir, uid, gid);
    chownSync(join(dir, 'sock'), uid, gid);
    return [dir, await freeRestartablePort(), bin];
  }

  get dataDir(): string {
    return join(this.dir, 'data');
  }

  get log(): string {
    return join(this.dir, 'postgres.log');
  }

  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Starts the server again on its data dir; resolves once it accepts connections. */
  async begin(): Promise<void> {
    const options = `-p ${this.port} -k ${join(this.dir, 'sock')} -c listen_addresses=127.0.0.1 -c max_connections=100 -c wal_level=logical -c max_replication_slots=10 -c max_wal_senders=10`;
    await this.asPostgres('pg_ctl', ['-D', this.dataDir, '-l', this.log, '-w', '-t', '60', '-o', options, 'start']);
  }

  /** `fast` ends every session and checkpoints; `immediate` aborts, and the next start recovers from the WAL (a crash, as far as clients see). */
  async end(mode: 'fast' | 'immediate'): Promise<void> {
    await this.asPostgres('pg_ctl', ['-D', this.dataDir, '-m', mode, '-w', '-t', '60', 'stop']);
  }

  async restart(mode: 'fast' | 'immediate'): Promise<void> {
    await this.end(mode);
    await this.begin();
  }

  /** Stops the server (if it runs) and removes its dir. Safe to call twice. */
  async cleanup(): Promise<void> {
    if (!existsSync(this.dir)) return;
    if (existsSync(join(this.dataDir, 'postmaster.pid'))) await this.end('immediate').catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }

  protected async asPostgres(tool: string, args: string[]): Promise<void> {
    // pg_ctl's presence picked the dir; the others (pg_basebackup for a standby) come from the same package.
    if (!existsSync(join(this.bin, tool))) throw new Error(`There is no ${tool} in ${this.bin}: install the full server with "bash scripts/services.sh up postgres" (postgresql-15), then run the test again.`);
    try {
      await run('runuser', ['-u', 'postgres', '--', join(this.bin, tool), ...args], { cwd: '/', timeout: 90_000 });
    } catch (error) {
      const { stderr } = error as { stderr?: string };
      throw new Error(`${tool} ${args.at(-1)} failed for the private server in ${this.dir}: ${stderr || String(error)} (log: ${this.log})`);
    }
  }
}

async function postgresUser(): Promise<{ uid: number; gid: number }> {
  try {
    const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  } catch {
    throw new Error('There is no user postgres: install the server with "bash scripts/services.sh up postgres" (postgresql-15), then run the test again.');
  }
}

