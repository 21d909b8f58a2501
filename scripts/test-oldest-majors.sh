#!/usr/bin/env bash
# Runs the store contract suite (PostgreSQL, SQLite), the module's startup tests and the unit tests
# against the oldest versions inside the library's peer ranges: NestJS 11 and TypeORM 0.3.
# The versions live in scripts/oldest-majors.package.json and are installed in .oldest/, apart from
# the project's own node_modules. Expects PostgreSQL up (scripts/services.sh up postgres).
set -euo pipefail
cd "$(dirname "$0")/.."

mkdir -p .oldest
if ! cmp -s scripts/oldest-majors.package.json .oldest/package.json || [ ! -d .oldest/node_modules/typeorm ]; then
  cp scripts/oldest-majors.package.json .oldest/package.json
  (cd .oldest && npm install --no-audit --no-fund --ignore-scripts --loglevel=error)
fi
npx jest -c jest.oldest.config.js --runInBand "$@"
