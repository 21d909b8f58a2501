import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A PostgreSQL server of one test's own (initdb into a temporary directory, a free port, loopback
 * only, wal_level = logical), so that the test may restart or stop it while the other tests keep
 * the shared server: it runs beside them in phase 1. The binaries are Debian's, which
 * `scripts/services.sh up postgres` installs.
 */
export class PrivatePostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly bin: string,
  ) {}

  /** `postgres://postgres@127.0.0.1:<port>/postgres`; the server trusts loopback connections. */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async start(): Promise<PrivatePostgres> {
    const bin = postgresBinaries();
    const dir = mkdtempSync(join(tmpdir(), 'outbox-pg-'));
    // initdb refuses root: the server runs as postgres, which must own the directory.
    chmodSync(dir, 0o755);
    chownSync(dir, uid('postgres'), gid('postgres'));
    const server = new PrivatePostgres(dir, await freePort(), bin);
    await server.asPostgres('initdb', '-D', join(dir, 'data'), '--no-sync', '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C.UTF-8');
    await server.startServer();
    return server;
  }

  /** `pg_ctl restart`: `fast` ends sessions and writes a shutdown checkpoint; `immediate` is a crash (recovery at start). */
  async restart(mode: 'fast' | 'immediate'): Promise<void> {
    await this.stop(mode);
    await this.startServer();
  }

  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await this.asPostgres('pg_ctl', '-D', join(this.dir, 'data'), '-m', mode, '-w', '-t', '60', 'stop');
  }

  async startServer(): Promise<void> {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c wal_level=logical -c max_replication_slots=10 -c max_wal_senders=10 -c max_connections=100`;
    await this.asPostgres('pg_ctl', '-D', join(this.dir, 'data'), '-l', join(this.dir, 'postgres.log'), '-w', '-t', '60', '-o', options, 'start');
  }

  /** Stops the server (if it runs) and removes its directory. */
  async destroy(): Promise<void> {
    if (existsSync(join(this.dir, 'data', 'postmaster.pid'))) await this.stop('immediate').catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async asPostgres(program: string, ...args: string[]): Promise<void> {
    await run('runuser', ['-u', 'postgres', '--', join(this.bin, program), ...args], { cwd: '/', timeout: 90_000 });
  }
}

function postgresBinaries(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((version) => existsSync(join(root, version, 'bin', 'pg_ctl'))) : [];
  if (versions.length === 0) throw new Error('No PostgreSQL server binaries under /usr/lib/postgresql: install them with "bash scripts/services.sh up postgres" (or run "npm test", which does).');
  return join(root, versions.sort((a, b) => Number(b) - Number(a))[0], 'bin');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

const uid = (user: string) => Number(execFileSync('id', ['-u', user]).toString().trim());
const gid = (user: string) => Number(execFileSync('id', ['-g', user]).toString().trim());
