import { runCli, type CliIo } from './outbox-cli';

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
    [['status', '--url', 'postgres://u:p@127.0.0.1:1/db', '--table', 'outbox"; DROP TABLE orders; --'], /"tableName"/],
    [['dead', 'requeue', '--from', '0000-01-01', '--url', 'postgres://u:p@127.0.0.1:1/db'], /--from must be an ISO-8601 time .*years 1 to 9999/],
    [['dead', 'discard', '--to', '2026-W01', '--url', 'postgres://u:p@127.0.0.1:1/db'], /--to must be an ISO-8601 time/],
    [['dead', 'list', '--after', '9223372036854775808', '--url', 'postgres://u:p@127.0.0.1:1/db'], /--after must be a position/],
    [['dead', 'list', '--limit', '99999999999999999999', '--url', 'postgres://u:p@127.0.0.1:1/db'], /--limit must be at most 10000/],
    [['pause', 'x'.repeat(256), '--url', 'postgres://u:p@127.0.0.1:1/db'], /at most 255 characters/],
    [['pause', 'orders', '--reason', 'x'.repeat(501), '--url', 'postgres://u:p@127.0.0.1:1/db'], /--reason must be at most 500/],
    [['retry-now', 'not-an-id', '--url', 'postgres://u:p@127.0.0.1:1/db'], /"not-an-id" is not a message id/],
  ])('refuses %j with exit 2 before connecting', async (argv, message) => {
    const { code, err } = await run(...argv);
    expect(code).toBe(2);
    expect(err).toMatch(message);
    expect(err).not.toMatch(/Cannot connect/);
  });
});
