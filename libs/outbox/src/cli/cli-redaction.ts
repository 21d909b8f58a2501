/**
 * The CLI never prints a password: not in a URL's user info (even one containing `@`, `:` or `/`),
 * not in its query (`?password=`, `sslpassword=`, tokens and keys), and not where a driver's error
 * happens to repeat it. Over-redacting a URL is harmless; printing a secret is not.
 */

const HIDDEN = '***';
// Query parameters whose value is a secret: password, sslpassword, passwd, pwd, secret, token, api keys.
const SECRET_PARAMETER = /([?&;]([^=&#;]*(?:pass|pwd|secret|token|key)[^=&#;]*)=)([^&#;]*)/gi;
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;

/** The URL with its password and secret query values replaced by `***`. */
export function redactUrl(url: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0];
  if (!scheme) return url.replace(SECRET_PARAMETER, `$1${HIDDEN}`);
  const rest = url.slice(scheme.length);
  const queryAt = rest.search(/[?#]/);
  const beforeQuery = queryAt < 0 ? rest : rest.slice(0, queryAt);
  // The user info ends at the LAST '@' before the query: a password may contain '@' (and ':' or '/').
  const at = beforeQuery.lastIndexOf('@');
  let main = beforeQuery;
  if (at >= 0) {
    const userInfo = beforeQuery.slice(0, at);
    const colon = userInfo.indexOf(':');
    main = colon < 0 ? beforeQuery : `${userInfo.slice(0, colon)}:${HIDDEN}${beforeQuery.slice(at)}`;
  }
  const query = queryAt < 0 ? '' : rest.slice(queryAt).replace(SECRET_PARAMETER, `$1${HIDDEN}`);
  return scheme + main + query;
}

/** The secrets a database URL carries, raw and percent-decoded, to be blotted out of any text. */
export function secretsOf(url: string | undefined): string[] {
  if (!url) return [];
  const secrets = new Set<string>();
  const add = (value: string | undefined) => {
    // Very short values would blot out ordinary words; they are redacted structurally instead.
    if (value && value.length >= 3) {
      secrets.add(value);
      try {
        secrets.add(decodeURIComponent(value));
      } catch {
        // Not percent-encoded: the raw value is enough.
      }
    }
  };
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0];
  if (scheme) {
    const rest = url.slice(scheme.length);
    const queryAt = rest.search(/[?#]/);
    const beforeQuery = queryAt < 0 ? rest : rest.slice(0, queryAt);
    const userInfo = beforeQuery.slice(0, Math.max(0, beforeQuery.lastIndexOf('@')));
    if (userInfo.includes(':')) add(userInfo.slice(userInfo.indexOf(':') + 1));
  }
  for (const match of url.matchAll(SECRET_PARAMETER)) add(match[3]);
  return [...secrets];
}

/** Text with every URL in it redacted and every known secret replaced by `***`. */
export function redactText(text: string, secrets: readonly string[] = []): string {
  let redacted = text.replace(URL_IN_TEXT, (url) => redactUrl(url));
  // Longest first, so that a secret containing another is replaced whole.
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) redacted = redacted.split(secret).join(HIDDEN);
  return redacted;
}

/** The database URLs a CLI run may print: `--url` (either form) and `$OUTBOX_DATABASE_URL`. */
export function urlsOf(argv: readonly string[], env: NodeJS.ProcessEnv): string[] {
  const urls: string[] = [];
  argv.forEach((arg, index) => {
    if (arg === '--url' && argv[index + 1] !== undefined) urls.push(argv[index + 1]);
    else if (arg.startsWith('--url=')) urls.push(arg.slice('--url='.length));
  });
  if (env.OUTBOX_DATABASE_URL) urls.push(env.OUTBOX_DATABASE_URL);
  return urls;
}
