import { runCli } from './outbox-cli';

async function cli(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { out: (line) => out.push(line), err: (line) => err.push(line), env: { USER: 'alice' } });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

// Every refusal comes before any connection: the URL below has no database behind it.
const url = ['--url', 'postgres://nobody@127.0.0.1:1/none'];

describe('nest-outbox replay: flags checked before connecting', () => {
  it.each([
    [['--type', 'x'], /"replay" needs --reason "<why>"/],
    [['--type', 'x', '--reason', '   '], /"replay" needs --reason/],
    [['--reason', 'lost'], /needs at least one filter: --aggregate-type, .*pass --all/],
    [['--all', '--type', 'x', '--reason', 'lost'], /--all replays every kept message: leave it out/],
    [['--since', 'monday', '--reason', 'lost'], /--since "monday" is refused: expected an ISO-8601 time/],
    [['--since', '2026-02-01T00:00:00Z', '--until', '2026-01-01T00:00:00Z', '--reason', 'lost'], /--until "2026-01-01T00:00:00Z" is refused: it must be later than --since/],
    [['--since', '2026-01-01', '--from', '2026-01-01', '--reason', 'lost'], /--since and --from are the same bound/],
    [['--type', 'x', '--reason', 'lost', '--by', ''], /--by "" is refused/],
    [['--destination', 'a\nb', '--reason', 'lost'], /--destination "a\\nb" is refused: it contains the control character/],
  ])('refuses %j naming the flag', async (args, message) => {
    const { code, err } = await cli('replay', ...url, ...args);
    expect(code).toBe(2);
    expect(err).toMatch(message);
    expect(err).not.toMatch(/Cannot connect/);
  });

  it('refuses an id that is not a UUID, and `show` without one', async () => {
    expect((await cli('replay', 'not-an-id', ...url, '--reason', 'x')).err).toContain('"not-an-id" is not a message id');
    expect((await cli('show', ...url)).err).toContain('"show" needs a message id');
  });

  it('lists replay and show in the usage', async () => {
    const { out } = await cli('--help');
    expect(out).toContain('replay --<filter> ... --reason <text>');
    expect(out).toContain('show <id>');
  });
});
