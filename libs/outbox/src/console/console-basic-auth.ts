import { createHash, timingSafeEqual } from 'node:crypto';
import { UnauthorizedException, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { invalidConsoleOption } from './outbox-console.messages';

export interface ConsoleBasicAuthOptions {
  username: string;
  password: string;
  /** Shown by the browser's sign-in prompt. Default `"Outbox console"`. */
  realm?: string;
}

/**
 * A console guard a browser passes by itself: HTTP Basic with its challenge. A request without
 * the right credentials gets 401 and `WWW-Authenticate: Basic`, the browser asks the operator once
 * and sends them with every request of the page (its assets and API calls included). Basic sends the
 * password with each request: serve the console over HTTPS only. For single sign-on, write a guard
 * that checks your session cookie or your proxy's header instead.
 *
 * `OutboxConsoleModule.forRoot({ guard: consoleBasicAuth({ username: 'ops', password: process.env.OPS_PASSWORD! }) })`
 */
export function consoleBasicAuth(options: ConsoleBasicAuthOptions): CanActivate {
  const { username, password, realm = 'Outbox console' } = options ?? ({} as ConsoleBasicAuthOptions);
  if (typeof username !== 'string' || username === '' || username.includes(':')) {
    throw new OutboxConfigurationError(invalidConsoleOption('guard: consoleBasicAuth username', 'a non-empty string without ":"', username));
  }
  if (typeof password !== 'string' || password === '') {
    // The value is not shown: it may be a secret set by mistake to something else.
    throw new OutboxConfigurationError(invalidConsoleOption('guard: consoleBasicAuth password', 'a non-empty string (check the variable it is read from)', typeof password === 'string' ? '' : typeof password));
  }
  if (typeof realm !== 'string' || !/^[\x20-\x7e]*$/.test(realm) || realm.includes('"')) {
    throw new OutboxConfigurationError(invalidConsoleOption('guard: consoleBasicAuth realm', 'printable ASCII without "', realm));
  }
  // Compared as digests, in constant time: neither the length nor the first wrong byte shows in the timing.
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  const expected = digest(`${username}:${password}`);
  const challenge = `Basic realm="${realm}", charset="UTF-8"`;
  return {
    canActivate(context: ExecutionContext): boolean {
      const http = context.switchToHttp();
      const header = http.getRequest<{ headers: Record<string, string | string[] | undefined> }>().headers.authorization;
      const given = typeof header === 'string' ? /^Basic ([A-Za-z0-9+/]+=*)$/i.exec(header.trim())?.[1] : undefined;
      if (given !== undefined && timingSafeEqual(digest(Buffer.from(given, 'base64').toString('utf8')), expected)) return true;
      http.getResponse<{ setHeader(name: string, value: string): unknown }>().setHeader('WWW-Authenticate', challenge);
      throw new UnauthorizedException('Operator credentials required (HTTP Basic).');
    },
  };
}
