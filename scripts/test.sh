#!/usr/bin/env bash
# The whole test suite: starts the services the integration tests need (installing them on a
# fresh machine), runs unit and integration tests, and stops the services again.
set -euo pipefail
cd "$(dirname "$0")/.."

npm run --silent typecheck

services=(postgres mariadb kafka rabbitmq nats redis mqtt)
bash scripts/services.sh up "${services[@]}"
trap 'bash scripts/services.sh down "${services[@]}" >/dev/null 2>&1 || true' EXIT

npx jest --selectProjects unit "$@"
# One file at a time: suites share the broker and the database server (each uses its own schema and topic).
# --forceExit: kafkajs consumers that restarted during the broker-outage test can keep a heartbeat
# timer alive after disconnect(); every test has finished and asserted by then.
npx jest --selectProjects integration --runInBand --forceExit "$@"
