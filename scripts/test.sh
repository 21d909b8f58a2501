#!/usr/bin/env bash
# The whole test suite: starts the services the integration tests need (installing them on a
# fresh machine), runs unit and integration tests, and stops the services again.
set -euo pipefail
cd "$(dirname "$0")/.."

npm run --silent typecheck

services=(postgres mariadb kafka rabbitmq nats redis mqtt)
# The trap comes first: a service that fails to start must not leave the others running.
trap 'bash scripts/services.sh down "${services[@]}" >/dev/null 2>&1 || true' EXIT
bash scripts/services.sh up "${services[@]}"
# The console page test drives a real headless Chromium.
bash scripts/services.sh chromium

# The oldest supported majors (NestJS 11, TypeORM 0.3) in .oldest/, beside the main run: they need
# only PostgreSQL and SQLite, and the log is shown when they finish.
mkdir -p .oldest
setsid bash scripts/test-oldest-majors.sh > .oldest/test.log 2>&1 &
oldest_majors=$!
# If the main run fails first, stop this one too (its own process group) before the services go down.
trap 'kill -- -"$oldest_majors" 2>/dev/null || true; bash scripts/services.sh down "${services[@]}" >/dev/null 2>&1 || true' EXIT

npx jest --selectProjects unit "$@"
# One file at a time: suites share the broker and the database server (each uses its own schema and topic).
# --forceExit: kafkajs consumers that restarted during the broker-outage test can keep a heartbeat
# timer alive after disconnect(); every test has finished and asserted by then.
npx jest --selectProjects integration --runInBand --forceExit "$@"

if wait "$oldest_majors"; then
  grep -E '^(Tests|Test Suites):' .oldest/test.log | sed 's/^/[oldest majors] /'
else
  cat .oldest/test.log
  echo "[oldest majors] FAILED: NestJS 11 / TypeORM 0.3 (scripts/test-oldest-majors.sh)" >&2
  exit 1
fi
