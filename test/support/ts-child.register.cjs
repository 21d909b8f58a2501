// Lets a forked child process run the repo's TypeScript as jest does (@swc/core, CommonJS, legacy
// decorators with metadata) and resolve `@nest-outbox/outbox` to the library's source, so that a
// test can SIGKILL a real application instance. Used as: fork(file, { execArgv: ['-r', this] }).
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');
const { transformSync } = require('@swc/core');

const SOURCE = path.join(__dirname, '..', '..', 'libs', 'outbox', 'src');
// The root and the subpath exports (package.json "exports"), each an index.ts, as jest.config.js maps them.
const ENTRY = /^@nest-outbox\/outbox(?:\/(testing|console|observability|core|typeorm|migrations))?$/;
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  const entry = ENTRY.exec(request);
  return resolve.call(this, entry ? path.join(SOURCE, entry[1] ?? '', 'index.ts') : request, ...rest);
};

require.extensions['.ts'] = (module, filename) => {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    jsc: { parser: { syntax: 'typescript', decorators: true }, transform: { legacyDecorator: true, decoratorMetadata: true }, target: 'es2022' },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};
