import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The page's files, shipped next to this module (copied into `dist/console/assets` by the library build). */
// A Map, not an object: a name such as `__proto__` or `constructor` must find nothing (404), not a prototype member.
const ASSETS = new Map<string, string>([
  ['console.js', 'text/javascript; charset=utf-8'],
  ['console.css', 'text/css; charset=utf-8'],
  ['poison.js', 'text/javascript; charset=utf-8'],
  ['replay.js', 'text/javascript; charset=utf-8'],
]);

const cache = new Map<string, Buffer>();

export function assetsDirectory(): string {
  const directory = join(__dirname, 'assets');
  if (!existsSync(directory)) {
    throw new Error(`The outbox console's page files are missing from ${directory}; the package was built without them (copy src/console/assets).`);
  }
  return directory;
}

export function readAsset(name: string): { body: Buffer; contentType: string } | undefined {
  const contentType = ASSETS.get(name);
  if (!contentType) return undefined;
  let body = cache.get(name);
  if (!body) {
    body = readFileSync(join(assetsDirectory(), name));
    cache.set(name, body);
  }
  return { body, contentType };
}

/**
 * The page, with its base URL set so that its relative links work under any mount path or global
 * prefix, the interval at which it refreshes itself (`refreshIntervalMs`, 0 = off), and the name
 * of the outbox it shows in an app with several (a name is letters, digits and `_`: nothing to escape).
 */
export function pageHtml(baseUrl: string, refreshIntervalMs: number, outbox?: string): string {
  const escaped = baseUrl.replace(/[&"<>]/g, (c) => `&#${c.charCodeAt(0)};`);
  return readFileSync(join(assetsDirectory(), 'index.html'), 'utf8')
    .replace('__BASE_URL__', escaped)
    .replace('__REFRESH_MS__', String(refreshIntervalMs))
    .replace('__OUTBOX_TITLE__', outbox ? ` · ${outbox}` : '')
    .replace('__OUTBOX_HEADING__', outbox ? ` <span id="outbox-name">${outbox}</span>` : '');
}
