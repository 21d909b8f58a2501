import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './outbox-cli';
import type { CliIo } from './cli-io';

/** Input checks that must fail before any connection is attempted (the URL points nowhere). */
describe('nest-outbox input checks', () => {
  const run = async (...argv: string[]) => {
    const err: string[] = [];
    const io: CliIo = { out: () => undefined, err: (line) => err.push(line), env: {} };
    const code = await runCli(argv, io);
    return { code, err: err.join('\n') };
  };

  it.each([
    [['status', '--url', 'postgres://u:p@127.0.0.1:1/db', '--schema', 'public -c statement_timeout=1'], /Option --schema must be an identifier/],
    [['status', '--url', 'postgres://u:p@127.0.0.1:1/db', '--table', 'outbox"; DROP TABLE orders; --'], /^nest-outbox: Option --table must be an identifier/],
    [['sql', '--dialect', 'postgres', '--table', 'x;drop'], /^nest-outbox: Option --table must be an identifier .*got "x;drop"/],
    [['dead', 'requeue', '--from', '0000-01-01', '--url', 'postgres://u:p@127.0.0.1:1/db'], /--from must be an ISO-8601 time .*years 1 to 9999/],
    [['dead', 'discard', '--to', '2026-W01', '--url', 'postgres://u:p@127.0.0.1:1/db'], /--to must be an ISO-8601 time/],
    [['dead', 'list', '--after', '9223372036854775808', '--url', 'postgres://u:p@127.0.0.1:1/db'], /--after must be a position/],
    [['dead', 'list', '--limit', '99999999999999999999', '--url', 'postgres://u:p@127.0.0.1:1/db'], /--limit must be at most 10000/],
    [['pause', 'x'.repeat(256), '--url', 'postgres://u:p@127.0.0.1:1/db'], /"nest-outbox pause", "x+…", is refused: it has 256 characters, more than 255\. A destination is a non-blank string of at most 255/],
    [['pause', '', '--url', 'postgres://u:p@127.0.0.1:1/db'], /destination argument of "nest-outbox pause", "", is refused: it is empty/],
    [['resume', '   ', '--url', 'postgres://u:p@127.0.0.1:1/db'], /destination argument of "nest-outbox resume", " {3}", is refused: it is blank/],
    [['pause', 'orders\nforged log line', '--url', 'postgres://u:p@127.0.0.1:1/db'], /"orders\\nforged log line", is refused: it contains the control character U\+000A at index 6\. A destination is .*without control characters/],
    [['resume', 'orders\u007f', '--url', 'postgres://u:p@127.0.0.1:1/db'], /"orders\\u007f", is refused: it contains the control character U\+007F/],
    [['pause', 'orders', '--reason', 'x'.repeat(501), '--url', 'postgres://u:p@127.0.0.1:1/db'], /--reason must be at most 500/],
    [['retry-now', 'not-an-id', '--url', 'postgres://u:p@127.0.0.1:1/db'], /"not-an-id" is not a message id/],
  ])('refuses %j with exit 2 before connecting', async (argv, message) => {
    const { code, err } = await run(...argv);
    expect(code).toBe(2);
    expect(err).toMatch(message);
    expect(err).not.toMatch(/Cannot connect/);
  });
});

describe('nest-outbox sql', () => {
  const run = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(argv, { out: (line) => out.push(line), err: (line) => err.push(line), env: {} });
    return { code, out: out.join('\n'), err: err.join('\n') };
  };

  it('prints the tables asked for, with their names', async () => {
    const { code, out } = await run('sql', '--dialect', 'mysql', '--tables', 'inbox,poison', '--inbox-table', 'seen', '--poison-table', 'bad');
    expect(code).toBe(0);
    expect(out).toMatch(/CREATE TABLE `seen`/);
    expect(out).toMatch(/CREATE TABLE `bad`/);
    expect(out).not.toMatch(/outbox_messages/);
  });

  it('prints on MariaDB the lock table beside the outbox table, filled with its 1,024 buckets', async () => {
    const { code, out } = await run('sql', '--dialect', 'mariadb', '--table', 'events');
    expect(code).toBe(0);
    expect(out).toMatch(/CREATE TABLE `events_locks` \(bucket int NOT NULL PRIMARY KEY\)/);
    expect(out).toMatch(/INSERT INTO `events_locks` \(bucket\) VALUES\n\s*\(0\), \(1\),[^;]*\(1023\);/);
  });

  it('writes a Prisma migration once, and refuses to rewrite it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'outbox-prisma-'));
    // Only the clock is faked: both runs name their folder after the same second.
    jest.useFakeTimers({ now: new Date('2026-01-31T12:34:56Z'), doNotFake: ['nextTick', 'setImmediate', 'clearImmediate', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'queueMicrotask', 'hrtime', 'performance'] });
    try {
      const first = await run('sql', '--dialect', 'postgres', '--format', 'prisma', '--out', dir);
      expect(first.code).toBe(0);
      const [folder] = readdirSync(dir);
      expect(folder).toBe('20260131123456_outbox');
      expect(readFileSync(join(dir, folder, 'migration.sql'), 'utf8')).toMatch(/CREATE TABLE "outbox_messages"/);
      expect(first.out).toMatch(/tables: \{ external: \["outbox_messages","outbox_messages_paused","outbox_messages_payloads"\] \}/);
      writeFileSync(join(dir, folder, 'migration.sql'), '-- applied');
      const again = await run('sql', '--dialect', 'postgres', '--format', 'prisma', '--out', dir);
      expect(again.code).toBe(2);
      expect(again.err).toMatch(/20260131123456_outbox\/migration\.sql exists already/);
      expect(readFileSync(join(dir, folder, 'migration.sql'), 'utf8')).toBe('-- applied');
    } finally {
      jest.useRealTimers();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prints the partitioned outbox table with --partition-by', async () => {
    const { code, out } = await run('sql', '--dialect', 'postgres', '--partition-by', 'hour');
    expect(code).toBe(0);
    expect(out).toMatch(/PARTITION BY RANGE \(created_at\)/);
    expect(out).toMatch(/CREATE TABLE "outbox_messages_default" PARTITION OF "outbox_messages" DEFAULT/);
  });

  it.each([
    [['sql', '--dialect', 'postgres', '--format', 'typeorm'], /--format must be sql, prisma or drizzle; got "typeorm"/],
    [['sql', '--dialect', 'postgres', '--tables', 'outbox,orders'], /--tables must list outbox, inbox or poison/],
    [['sql', '--dialect', 'postgres', '--format', 'drizzle', '--out', '/tmp'], /--out writes a Prisma migration/],
    [['sql', '--dialect', 'oracle'], /--dialect must be postgres, sqlite or mariadb; got "oracle"/],
    [['sql', '--dialect', 'postgres', '--partition-by', 'week'], /--partition-by must be day or hour; got "week"/],
    [['sql', '--dialect', 'mariadb', '--partition-by', 'day'], /--partition-by needs --dialect postgres/],
    [['sql'], /`sql` needs --dialect: postgres, sqlite or mariadb \(e\.g\. nest-outbox sql --dialect postgres\)/],
  ])('refuses %j with exit 2', async (argv, message) => {
    const { code, err } = await run(...argv);
    expect(code).toBe(2);
    expect(err).toMatch(message);
  });
});

describe('nest-outbox --help', () => {
  it('lists every command group, the poison commands included, with no template left unfilled', async () => {
    const out: string[] = [];
    await runCli(['--help'], { out: (line) => out.push(line), err: () => undefined, env: {} });
    const usage = out.join('\n');
    for (const command of ['status', 'dead list', 'pause <destination>', 'poison list', 'sql --dialect']) expect(usage).toContain(command);
    expect(usage).not.toContain('${');
  });
});
