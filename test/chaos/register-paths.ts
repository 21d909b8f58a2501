/**
 * The chaos suite runs as plain CommonJS compiled by tsc, which keeps the `@nest-outbox/outbox`
 * alias of the root tsconfig as it is. Every entry point imports this module first: it points the
 * alias at the compiled library next to the suite (dist/chaos/libs/outbox/src), so the demo's
 * entities and the suite share one copy of the library (one metadata registry).
 */
import Module = require('node:module');
import { join } from 'node:path';

const LIBRARY = join(__dirname, '..', '..', 'libs', 'outbox', 'src', 'index.js');

type Resolve = (request: string, ...rest: unknown[]) => string;
const loader = Module as unknown as { _resolveFilename: Resolve };
const original = loader._resolveFilename;
loader._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]): string {
  return original.call(this, request === '@nest-outbox/outbox' ? LIBRARY : request, ...rest);
};
