#!/usr/bin/env node
// `nest-outbox` in a clone of this repository (the root package.json's "bin", which `npx nest-outbox`
// finds): the CLI from libs/outbox/src, compiled as it loads by @swc/core with the settings jest uses.
// So it works right after `npm install`, before any build, and always runs the checkout's source.
// The published package's `nest-outbox` is its built dist/cli/outbox-cli.main.js (libs/outbox/package.json).
'use strict';
const { readFileSync, realpathSync } = require('node:fs');
const { join } = require('node:path');
const { transformSync } = require('@swc/core');

// Real path: Node hands the hook the real path of each file, also when the checkout is reached through a link.
const source = realpathSync(join(__dirname, '..', 'libs', 'outbox', 'src'));
const options = {
  jsc: { parser: { syntax: 'typescript', decorators: true }, transform: { legacyDecorator: true, decoratorMetadata: true }, target: 'es2022' },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
};

// Only the library's own TypeScript; a `.ts` file of any other place keeps Node's handling.
const nodeTs = require.extensions['.ts'];
require.extensions['.ts'] = (module, filename) => {
  if (!filename.startsWith(source)) {
    if (nodeTs) return nodeTs(module, filename);
    throw new Error(`nest-outbox (run from the repository's source) compiles only ${source}, not ${filename}.`);
  }
  module._compile(transformSync(readFileSync(filename, 'utf8'), { ...options, filename }).code, filename);
};
process.setSourceMapsEnabled?.(true);

require(join(source, 'cli', 'outbox-cli.main.ts'));
