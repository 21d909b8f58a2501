/**
 * The chaos suite runs as plain CommonJS compiled by tsc, which keeps the `@nest-outbox/outbox`
 * alias of the root tsconfig as it is. Every entry point imports this module first: it points the
 * alias (and its subpaths) at the compiled library next to the suite (dist/chaos/libs/outbox/src), so the demo's
 * entities and the suite share one copy of the library (one metadata registry).
 */
import Module = require('node:module');
import { join } from 'node:path';

const LIBRARY = join(__dirname, '..', '..', 'libs', 'outbox', 'src');

/** The root entry point or a subpath export (`@nest-outbox/outbox/testing` → testing/index.js). */
function library(request: string): string | undefined {
  if (request === '@nest-outbox/outbox') return join(LIBRARY, 'index.js');
  const subpath = /^@nest-outbox\/outbox\/(\w+)$/.exec(request)?.[1];
  return subpath === undefined ? undefined : join(LIBRARY, subpath, 'index.js');
}

type Resolve = (request: string, ...rest: unknown[]) => string;
const loader = Module as unknown as { _resolveFilename: Resolve };
const original = loader._resolveFilename;
loader._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]): string {
  return original.call(this, library(request) ?? request, ...rest);
};
