import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createConnection } from 'mysql2/promise';
import { Client } from 'pg';
import { privateMariaDbDatabase, postgresAdmin } from '../support/databases';
import { requireService } from '../support/services';
import { waitFor } from '../support/wait-for';

const support = join(__dirname, '..', 'support');

/** One app instance in a process of its own; `ready` settles once it answers, or when it exits first. */
export interface Instance {
  readonly child: ChildProcess;
  /** What the process wrote to stdout and stderr so far. */
  output(): string;
  /** Envelope ids it reported as published over IPC (the WAL app does). */
  readonly published: string[];
  /** When it reached its start line (its first DataSource.initialize), by its own clock (ms). */
  arrivedAt(): number | undefined;
  /** Whether it sent `{ t }` over IPC (the WAL app sends `ready`). */
  said(t: string): boolean;
  /** Whether it has exited (a failed start, or a crash). */
  exited(): boolean;
  kill(): Promise<void>;
}

/**
 * Forks `file` with the repo's TypeScript loader, held at its start line (start-together.cjs) until
 * `releaseTogether`; the instance dies with the test.
 */
export function forkInstance(file: string, env: Record<string, string>): Instance {
  const child = fork(file, [], {
    execArgv: ['-r', join(support, 'ts-child.register.cjs'), '-r', join(support, 'exit-with-parent.cjs'), '-r', join(support, 'start-together.cjs')],
    env: { ...process.env, ...env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const published: string[] = [];
  const said = new Set<string>();
  let arrivedAt: number | undefined;
  child.on('message', (message: { t: string; id?: string; text?: string; at?: number }) => {
    said.add(message.t);
    if (message.t === 'at-start-line') arrivedAt = message.at;
    if (message.t === 'published' && message.id) published.push(message.id);
    if (message.t === 'failed') output += `\n[failed] ${message.text}\n`;
  });
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  return {
    child,
    output: () => output,
    published,
    arrivedAt: () => arrivedAt,
    said: (t) => said.has(t),
    exited,
    kill: async () => {
      if (exited()) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await gone;
    },
  };
}

/**
 * Waits until every instance is at its start line, then lets them all go at once. Resolves how far
 * apart they arrived (ms): the spread a start without the line would have had.
 */
export async function releaseTogether(instances: Instance[], timeoutMs: number): Promise<number> {
  await waitUntilAllReady(instances, async (instance) => instance.arrivedAt() !== undefined, timeoutMs, 'reach the start line');
  for (const instance of instances) instance.child.send({ t: 'go' });
  const arrivals = instances.map((instance) => instance.arrivedAt()!);
  return Math.max(...arrivals) - Math.min(...arrivals);
}

/** Waits for every instance's `isReady`; fails at once, with its output, when one exits instead. */
export async function waitUntilAllReady(
  instances: Instance[],
  isReady: (instance: Instance, index: number) => Promise<boolean>,
  timeoutMs: number,
  what = 'start',
): Promise<void> {
  const ready = new Set<number>();
  const outcome = await waitFor(
    `all ${instances.length} instances to ${what}`,
    async () => {
      for (const [index, instance] of instances.entries()) {
        if (ready.has(index)) continue;
        if (instance.exited()) return { exited: index };
        if (await isReady(instance, index).catch(() => false)) ready.add(index);
      }
      return ready.size === instances.length && { exited: undefined };
    },
    timeoutMs,
  );
  if (outcome.exited !== undefined) {
    const instance = instances[outcome.exited];
    throw new Error(`instance ${outcome.exited + 1} of ${instances.length} exited (${instance.child.exitCode ?? instance.child.signalCode}) before it could ${what}:\n${instance.output().slice(-4_000)}`);
  }
}

/** What a fresh, empty database gives the test: a URL for the app, its catalog, and its removal. */
export interface FreshDatabase {
  /** DATABASE_URL for the demo (sqlite:<file>, postgres://…, mysql://…). */
  readonly url: string;
  /** Names of the tables in the app's schema, sorted; each name appears once per table. */
  tables(): Promise<string[]>;
  /** Rows of TypeORM's `migrations` table: name and how many times it is recorded. */
  migrations(): Promise<Array<{ name: string; times: number }>>;
  drop(): Promise<void>;
}

const MIGRATIONS = 'SELECT name, COUNT(*) AS times FROM migrations GROUP BY name';
const migrationRow = (row: Record<string, unknown>) => ({ name: String(row.name), times: Number(row.times) });
// In JavaScript's order, not the database's collation, so that every database compares alike.
const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : 1);

/** A database of its own on the test PostgreSQL server (CREATE DATABASE); `beforeDrop` runs connected to it. */
export async function freshPostgresDatabase(prefix: string, beforeDrop?: (client: Client) => Promise<void>): Promise<FreshDatabase> {
  const server = requireService('postgres');
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  await postgresAdmin(server, `CREATE DATABASE ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  const query = async (sql: string) => {
    const client = new Client({ connectionString: url.toString() });
    await client.connect();
    try {
      return (await client.query(sql)).rows;
    } finally {
      await client.end();
    }
  };
  return {
    url: url.toString(),
    tables: async () =>
      (await query(`SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY 1`)).map((row) => String(row.relname)).sort(),
    migrations: async () => (await query(MIGRATIONS)).map(migrationRow).sort(byName),
    drop: async () => {
      if (beforeDrop) {
        const client = new Client({ connectionString: url.toString() });
        await client.connect();
        try {
          await beforeDrop(client);
        } finally {
          await client.end();
        }
      }
      await postgresAdmin(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

export async function freshMariaDbDatabase(prefix: string): Promise<FreshDatabase> {
  const { url, drop } = await privateMariaDbDatabase(prefix);
  const query = async (sql: string) => {
    const connection = await createConnection(url);
    try {
      return (await connection.query(sql))[0] as Array<Record<string, unknown>>;
    } finally {
      await connection.end();
    }
  };
  return {
    url,
    tables: async () => (await query(`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY 1`)).map((row) => String(row.name)).sort(),
    migrations: async () => (await query(MIGRATIONS)).map(migrationRow).sort(byName),
    drop,
  };
}

/** A file database in a temp dir of its own (the demo's SQLite runs in WAL journal mode). */
export async function freshSqliteDatabase(prefix: string): Promise<FreshDatabase> {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const file = join(dir, 'orders.sqlite');
  const query = (sql: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare(sql).all() as Array<Record<string, unknown>>;
    } finally {
      db.close();
    }
  };
  return {
    url: `sqlite:${file}`,
    tables: async () => query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY 1`).map((row) => String(row.name)).sort(),
    migrations: async () => query(MIGRATIONS).map(migrationRow).sort(byName),
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}
