import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createConsoleHarness, type ConsoleHarness } from '../support/console.harness';
import { RecordingTransport } from '../support/recording.transport';
import { requireService } from '../support/services';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');
// The command as installed: the library's `bin`, from its build output.
const bin = join(root, 'libs', 'outbox', require(join(root, 'libs', 'outbox', 'package.json')).bin['nest-outbox']);

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

beforeAll(async () => {
  // Builds the library as it is packed (tsc, then the console's assets), so the bin under test is the shipped one.
  await run('npm', ['run', '--silent', 'build:lib'], { cwd: root });
  expect(existsSync(bin)).toBe(true);
}, 120_000);

// `npx nest-outbox` in the repository runs the build output through the workspace's link, as a
// program: tsc writes it without the execute bit, which npm sets only when it installs a packed tarball.
it('runs as a program, not only through node (npx nest-outbox in the repository)', async () => {
  const { stdout } = await run(bin, ['--help']);
  expect(stdout).toMatch(/^Usage: nest-outbox <command> \[options\]/);
});

async function cli(...args: string[]): Promise<Result> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], { env: { ...process.env, OUTBOX_DATABASE_URL: '' } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('nest-outbox CLI on PostgreSQL', () => {
  let h: ConsoleHarness;
  let schema: string;
  let url: string;

  beforeEach(async () => {
    h = await createConsoleHarness('postgres');
    url = requireService('postgres');
    schema = (await h.dataSource.query('SELECT current_schema() AS s'))[0].s;
  });
  afterEach(() => h.close());

  const db = () => ['--url', url, '--schema', schema];
  const statuses = async () => {
    const rows: Array<{ status: string; n: string }> = await h.dataSource.query('SELECT status, count(*) AS n FROM outbox_messages GROUP BY status');
    return Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
  };
  const message = (aggregateId: string, type = 'orders.order-placed', topic?: string) => ({ type, aggregateType: 'order', aggregateId, payload: {}, topic });
  async function seedDead(): Promise<string[]> {
    const dead = await h.add([message('d-1', 'orders.order-failed'), message('d-2', 'orders.order-failed'), message('d-3', 'orders.order-late', 'late')]);
    await h.dataSource.query(`UPDATE outbox_messages SET status = 'dead', attempts = 5, last_error = 'partner down', dead_at = now(), error_history = '[]'`);
    return dead;
  }

  it('status: figures and exit code by thresholds', async () => {
    await seedDead();
    await h.add([message('p-1')]);
    const ok = await cli('status', ...db());
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('pending 1');
    expect(ok.stdout).toContain('dead 3');
    const failing = await cli('status', ...db(), '--max-dead', '2');
    expect(failing.code).toBe(1);
    expect(failing.stdout).toContain('FAIL 3 dead message(s), over --max-dead 2');
    expect((await cli('status', ...db(), '--max-dead', '3', '--max-lag', '3600')).code).toBe(0);
    const json = await cli('status', ...db(), '--json', '--max-lag', '0');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ pending: 1, dead: 3, ok: false });
  });

  it('dead list, requeue and discard by id, and by filter with a dry run', async () => {
    const dead = await seedDead();
    const list = await cli('dead', 'list', ...db());
    expect(list.code).toBe(0);
    expect(list.stdout.trim().split('\n').map((line) => line.split('\t')[1])).toEqual(dead);
    expect((await cli('dead', 'requeue', dead[0], ...db())).stdout).toContain(`Message ${dead[0]} requeued.`);
    expect((await cli('dead', 'discard', dead[2], ...db())).code).toBe(0);
    expect(await statuses()).toEqual({ pending: 1, dead: 1, discarded: 1 });
    const dry = await cli('dead', 'requeue', '--type', 'orders.order-failed', '--dry-run', ...db());
    expect(dry.stdout).toContain('1 dead message(s) match; nothing changed');
    expect(await statuses()).toEqual({ pending: 1, dead: 1, discarded: 1 });
    expect((await cli('dead', 'requeue', '--type', 'orders.order-failed', ...db())).stdout).toContain('1 dead message(s) requeued.');
    expect(await statuses()).toEqual({ pending: 2, discarded: 1 });
    // Nothing dead any more: said, not an empty screen; the JSON form stays a list.
    expect((await cli('dead', 'list', ...db())).stdout).toBe('No dead messages.\n');
    expect((await cli('dead', 'list', '--after', '5', ...db())).stdout).toBe('No dead messages after position 5.\n');
    expect(JSON.parse((await cli('dead', 'list', '--json', ...db())).stdout)).toEqual([]);
  });

  it('pause, paused and resume a destination, seen by a relay; an unknown one needs --confirm-unknown', async () => {
    const refused = await cli('pause', 'late', ...db());
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('No outbox row has ever used the destination "late"');
    expect(refused.stderr).toContain('--confirm-unknown');
    expect((await cli('paused', ...db())).stdout).toBe('No destination is paused.\n');
    expect((await cli('pause', 'late', '--confirm-unknown', '--reason', 'partner maintenance', ...db())).stdout).toContain('Paused "late"');
    expect((await cli('paused', ...db())).stdout).toMatch(/^late\tpaused since \S+\tpartner maintenance\n$/);
    const status = await cli('status', ...db());
    expect(status.stdout).toMatch(/^PAUSED late since \S+: partner maintenance$/m);
    expect(JSON.parse((await cli('status', ...db(), '--json')).stdout).paused).toEqual([{ destination: 'late', pausedAt: expect.any(String), reason: 'partner maintenance' }]);
    expect((await cli('pause', 'late', '--confirm-unknown', ...db())).stdout).toContain('already paused');
    const [held] = await h.add([message('l-1', 'orders.order-late', 'late')]);
    const transport = new RecordingTransport();
    await h.relay('cli-relay', transport).publishBatch();
    expect(transport.delivered).toEqual([]);
    expect((await cli('resume', 'late', ...db())).stdout).toContain('Resumed "late"');
    await h.relay('cli-relay-2', transport).publishBatch();
    expect(transport.delivered.map((m) => m.envelope.id)).toEqual([held]);
  });

  it('retry-now makes rows in backoff due now, one or by filter, keeping their attempts', async () => {
    const [one, two, other] = await h.add([message('w-1', 'orders.order-placed', 'late'), message('w-2', 'orders.order-placed', 'late'), message('w-3')]);
    await h.dataSource.query(`UPDATE outbox_messages SET attempts = 3, next_attempt_at = now() + interval '1 hour'`);
    expect((await cli('retry-now', one, ...db())).stdout).toContain(`Message ${one} is due now; its attempts are kept.`);
    expect((await cli('retry-now', '--destination', 'late', '--dry-run', ...db())).stdout).toContain('1 message(s) in backoff match; nothing changed (dry run).');
    expect((await cli('retry-now', '--destination', 'late', ...db())).stdout).toContain('1 message(s) in backoff are due now.');
    const conflict = await cli('retry-now', one, ...db());
    expect(conflict.code).toBe(2);
    expect(conflict.stderr).toContain('not waiting in backoff');
    const rows: Array<{ id: string; attempts: number; due: boolean }> = await h.dataSource.query(
      'SELECT id, attempts, next_attempt_at <= now() AS due FROM outbox_messages ORDER BY position',
    );
    expect(rows).toEqual([
      { id: one, attempts: 3, due: true },
      { id: two, attempts: 3, due: true },
      { id: other, attempts: 3, due: false },
    ]);
    expect((await cli('retry-now', 'not-an-id', ...db())).stderr).toContain('"not-an-id" is not a message id');
    expect((await cli('retry-now', ...db())).stderr).toContain('at least one filter');
  });

  it('sql prints the DDL of a dialect and table name', async () => {
    const pg = await cli('sql', '--dialect', 'postgres', '--table', 'billing_outbox');
    expect(pg.code).toBe(0);
    expect(pg.stdout).toContain('CREATE TABLE "billing_outbox"');
    expect(pg.stdout).toContain('CREATE TABLE "billing_outbox_paused"');
    expect((await cli('sql', '--dialect', 'mariadb')).stdout).toContain('CREATE TABLE `outbox_messages`');
    expect((await cli('sql', '--dialect', 'oracle')).code).toBe(2);
    expect((await cli('sql', '--dialect', 'postgres', '--table', 'bad name')).stderr).toContain('Option --table must be an identifier');
  });

  it('bad URL, unknown id or bad input: a clear error, exit 2, nothing changed', async () => {
    const dead = await seedDead();
    const before = await statuses();
    const refused = await cli('status', '--url', 'postgres://outbox:secret@127.0.0.1:1/nothing');
    expect(refused).toMatchObject({ code: 2 });
    expect(refused.stderr).toContain('Cannot connect to postgres://outbox:***@127.0.0.1:1/nothing');
    expect(refused.stderr).not.toContain('secret');
    // A password with '@' in it, and one in the query: no part of either is printed.
    for (const url of ['postgres://outbox:p@ss@127.0.0.1:1/nothing', 'postgres://127.0.0.1:1/nothing?user=outbox&password=hunter22']) {
      const failed = await cli('status', '--url', url);
      expect(failed.code).toBe(2);
      expect(failed.stderr).toContain('Cannot connect to postgres://');
      expect(`${failed.stdout}${failed.stderr}`).not.toMatch(/p@ss|ss@127|hunter22/);
    }
    expect((await cli('dead', 'list', ...db(), '--after', '9223372036854775808')).stderr).toContain('--after must be a position');
    expect((await cli('dead', 'list', ...db(), '--limit', '99999999999999999999')).stderr).toContain('--limit must be at most 10000');
    expect((await cli('status', '--url', 'mongodb://localhost')).stderr).toContain('Cannot use "mongodb://localhost" as a database URL');
    expect((await cli('status', '--url', 'sqlite:/nowhere/outbox.sqlite')).stderr).toContain('No SQLite database at "/nowhere/outbox.sqlite"');
    expect((await cli('status')).stderr).toContain('No database');
    const unknown = await cli('dead', 'requeue', '00000000-0000-4000-8000-000000000000', ...db());
    expect(unknown).toMatchObject({ code: 2 });
    expect(unknown.stderr).toContain('No outbox message has id "00000000-0000-4000-8000-000000000000"');
    expect((await cli('dead', 'discard', 'not-an-id', ...db())).stderr).toContain('"not-an-id" is not a message id');
    expect((await cli('dead', 'requeue', ...db())).stderr).toContain('at least one filter');
    expect((await cli('status', ...db(), '--max-dead', 'many')).stderr).toContain('--max-dead must be');
    expect((await cli('frobnicate', ...db())).code).toBe(2);
    expect((await cli('status', ...db(), '--colour')).code).toBe(2);
    expect(await statuses()).toEqual(before);
    expect(dead).toHaveLength(3);
  });
});

describe('nest-outbox CLI on MariaDB', () => {
  it('pauses, lists, requeues by filter and reports status', async () => {
    const h = await createConsoleHarness('mariadb');
    try {
      const database = (await h.dataSource.query('SELECT DATABASE() AS db'))[0].db as string;
      const server = new URL(requireService('mariadb'));
      server.pathname = `/${database}`;
      const db = ['--url', server.toString()];
      await h.add([{ type: 'orders.order-failed', aggregateType: 'order', aggregateId: 'm-1', payload: {} }]);
      await h.dataSource.query(`UPDATE outbox_messages SET status = 'dead', attempts = 5, dead_at = NOW(3), error_history = '[]'`);
      expect((await cli('pause', 'late', ...db)).stderr).toContain('--confirm-unknown');
      expect((await cli('pause', 'late', '--confirm-unknown', '--reason', 'maintenance', ...db)).stdout).toContain('Paused "late"');
      expect((await cli('paused', ...db)).stdout).toMatch(/^late\tpaused since \S+\tmaintenance\n$/);
      expect((await cli('status', ...db)).stdout).toMatch(/^PAUSED late since \S+: maintenance$/m);
      expect((await cli('status', ...db, '--max-dead', '0')).code).toBe(1);
      expect((await cli('dead', 'requeue', '--type', 'orders.order-failed', ...db)).stdout).toContain('1 dead message(s) requeued.');
      expect((await cli('status', ...db, '--max-dead', '0')).code).toBe(0);
      expect((await cli('resume', 'late', ...db)).stdout).toContain('Resumed "late"');
    } finally {
      await h.close();
    }
  });
});
