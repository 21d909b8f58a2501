#!/usr/bin/env bash
# The benchmark suite (see BENCHMARKS.md): compiles test/bench with the repo's TypeScript into
# .bench/build, starts PostgreSQL and the Kafka test broker (installing them on a fresh machine),
# runs the benchmarks and stops the services again.
#
#   npm run bench                    quick size (a few minutes)
#   npm run bench -- --full          larger size (P1/P4 100k rows, P5 1M rows)
#   npm run bench -- --only P1,P3    some of P1..P10
#   npm run bench -- --update-doc    also write the figures into BENCHMARKS.md
set -euo pipefail
cd "$(dirname "$0")/.."

npx tsc -p test/bench/tsconfig.json

services=(postgres kafka)
trap 'bash scripts/services.sh down "${services[@]}" >/dev/null 2>&1 || true' EXIT
bash scripts/services.sh up "${services[@]}"
# P1 runs ConfluentKafkaTransport and a raw librdkafka producer beside kafkajs.
bash scripts/services.sh kafka-javascript
# The addresses of the services just started win over any older ones in the environment.
set -a
# shellcheck disable=SC1091 # written by services.sh up
. "${OUTBOX_SERVICES_DIR:-$PWD/.services}/env"
set +a

node .bench/build/test/bench/run.js "$@"
