import { redactText, redactUrl, secretsOf, urlsOf } from './cli-redaction';
import { runCli } from './outbox-cli';

describe('CLI redaction', () => {
  it.each([
    ['postgres://outbox:secret@db:5432/app', 'postgres://outbox:***@db:5432/app', 'secret'],
    ['postgres://outbox:p@ss@word@db:5432/app', 'postgres://outbox:***@db:5432/app', 'ss@word'],
    ['postgres://outbox:a:b/c@db/app?sslmode=require', 'postgres://outbox:***@db/app?sslmode=require', 'a:b/c'],
    ['postgres://db:5432/app?user=outbox&password=hunter22', 'postgres://db:5432/app?user=outbox&password=***', 'hunter22'],
    ['postgres://outbox@db/app?sslpassword=keypass1&sslmode=verify-full', 'postgres://outbox@db/app?sslpassword=***&sslmode=verify-full', 'keypass1'],
    ['mysql://root:top%40secret@127.0.0.1:3306/app?password=other99', 'mysql://root:***@127.0.0.1:3306/app?password=***', 'top%40secret'],
    ['sqlite:/var/data/outbox.sqlite', 'sqlite:/var/data/outbox.sqlite', undefined],
  ])('redacts %s', (url, shown, secret) => {
    expect(redactUrl(url)).toBe(shown);
    if (secret) expect(redactUrl(url)).not.toContain(secret);
  });

  it('blots out a known password wherever a driver repeats it, raw or percent-decoded', () => {
    const secrets = secretsOf('mysql://root:top%40secret@127.0.0.1/app?password=hunter22');
    const text = redactText('Access denied (password "top@secret"), retried with hunter22 at mysql://root:top%40secret@127.0.0.1/app', secrets);
    expect(text).not.toMatch(/top@secret|top%40secret|hunter22/);
    expect(text).toContain('mysql://root:***@127.0.0.1/app');
  });

  it('finds the URL in --url, --url= and $OUTBOX_DATABASE_URL', () => {
    expect(urlsOf(['status', '--url', 'a://x', '--url=b://y'], { OUTBOX_DATABASE_URL: 'c://z' })).toEqual(['a://x', 'b://y', 'c://z']);
  });

  it('prints no part of the password when the connection fails', async () => {
    const lines: string[] = [];
    const io = { out: (line: string) => lines.push(line), err: (line: string) => lines.push(line), env: {} };
    for (const url of ['postgres://outbox:p@ss@127.0.0.1:1/db', 'postgres://127.0.0.1:1/db?user=outbox&password=hunter22', 'nosuch://u:p@ss@host/db?password=hunter22']) {
      expect(await runCli(['status', '--url', url], io)).toBe(2);
    }
    expect(lines.length).toBe(3);
    expect(lines.join('\n')).not.toMatch(/p@ss|ss@|hunter22/);
    expect(lines[0]).toContain('postgres://outbox:***@127.0.0.1:1/db');
  });
});
