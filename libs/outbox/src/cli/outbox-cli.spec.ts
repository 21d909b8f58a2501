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
  ])('refuses %j with exit 2 before connecting', async (argv, message) => {
    const { code, err } = await run(...argv);
    expect(code).toBe(2);
    expect(err).toMatch(message);
    expect(err).not.toMatch(/Cannot connect/);
  });
});
