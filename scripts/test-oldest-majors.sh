#!/usr/bin/env bash
# Runs the store contract suite (PostgreSQL, SQLite, MariaDB), the module's and the observability
# options' startup tests, the @nestjs/cqrs, unchanged-save and migration-lock tests and the unit tests against the
# oldest versions inside the library's peer ranges: NestJS 11, TypeORM 0.3, and the oldest
# @nestjs/cqrs, @nestjs/terminus, @opentelemetry/api and prom-client.
# The versions live in scripts/oldest-majors.package.json and are installed in .oldest/, apart from
# the project's own node_modules. Expects PostgreSQL and MariaDB up (scripts/services.sh up postgres mariadb).
# It runs on the oldest Node that package.json's engines accept (the first version they name),
# installed by scripts/use-node.sh; the main run uses the Node it is started with.
set -euo pipefail
cd "$(dirname "$0")/.."

oldest_node="$(node -p 'require("./package.json").engines.node.match(/\d+\.\d+\.\d+/)[0]')"
eval "$(bash scripts/use-node.sh "$oldest_node")"

mkdir -p .oldest
if ! cmp -s scripts/oldest-majors.package.json .oldest/package.json || [ ! -d .oldest/node_modules/typeorm ]; then
  cp scripts/oldest-majors.package.json .oldest/package.json
  (cd .oldest && npm install --no-audit --no-fund --ignore-scripts --loglevel=error)
fi
npx jest -c jest.oldest.config.js --runInBand "$@"
