#!/usr/bin/env bash
# The whole test suite: starts the services the integration tests need (installing them on a
# fresh machine), runs unit and integration tests, and stops the services again.
#
# Integration tests run in two phases against the same services (each test uses its own schema,
# database, topic or queue):
#   1. every test that leaves the shared services alone, split into OUTBOX_TEST_GROUPS (default 2)
#      jest processes side by side, each one file at a time; each group's output is shown whole
#      when it ends, a failing group's last;
#   2. the tests that stop a shared service mid-run (Kafka, PostgreSQL, RabbitMQ, NATS, Redis,
#      MQTT), look at server-wide state, or rebuild the library's dist (npm pack), one file at a
#      time, alone.
# Each phase counts its test files first (jest --listTests): one that selects none fails rather
# than pass having run nothing.
# The exit code is non-zero if any group failed.
set -euo pipefail
cd "$(dirname "$0")/.."

# package.json's engines name the supported Node versions; an older one fails here, not halfway.
if (($(node -p 'process.versions.node.split(".")[0]') < 22)); then
  echo "Node $(node --version) is not supported (package.json engines: Node 22 or 24). For this shell: eval \"\$(bash scripts/use-node.sh 24)\", then npm install again." >&2
  exit 1
fi
echo "── Node $(node --version)"

npm run --silent typecheck
# The code blocks of docs/tutorial.md, docs/prisma.md and docs/several-outboxes.md are their example apps' files
# (test/tutorial and test/examples build and run those apps).
npm run --silent docs:verify

services=(postgres mariadb kafka rabbitmq nats redis mqtt)
logs="$(mktemp -d)"
# The trap comes first: a service that fails to start must not leave the others running.
trap 'bash scripts/services.sh down "${services[@]}" >/dev/null 2>&1 || true; rm -rf "$logs"' EXIT
bash scripts/services.sh up "${services[@]}"
# The console page test drives a real headless Chromium.
bash scripts/services.sh chromium
# The shipped alert rules are unit-tested with promtool (Debian's prometheus package).
bash scripts/services.sh promtool
# ConfluentKafkaTransport's peer is a native addon npm does not build here (allowScripts): built once per machine, cached.
bash scripts/services.sh kafka-javascript

# The oldest supported majors (NestJS 11, TypeORM 0.3, oldest optional peers) in .oldest/, beside the main run: they need
# only PostgreSQL, MariaDB and SQLite, and the log is shown when they finish.
mkdir -p .oldest
# A run that hangs (a handle left open) fails after 15 minutes instead of holding CI to its limit.
setsid timeout --kill-after=10 900 bash scripts/test-oldest-majors.sh > .oldest/test.log 2>&1 &
oldest_majors=$!
# If the main run fails first, stop this one too (its own process group) before the services go down.
trap 'kill -- -"$oldest_majors" 2>/dev/null || true; bash scripts/services.sh down "${services[@]}" >/dev/null 2>&1 || true; rm -rf "$logs"' EXIT

npx jest --selectProjects unit "$@"
npm run --silent test:rules
# Every TypeScript block of README.md and docs/ compiles against the built package.
npm run --silent docs:check

# Phase 2's files (path patterns): they take a service away from everyone else while they run.
alone=(
  '/test/transports/'
  '/test/multi-destination\.'
  '/test/order-service\.(kafka|readiness|operations|hardening)\.'
  '/test/packaging/'
  '/test/tutorial/'                  # packs the library's dist, as packaging does
  '/test/examples/'                  # packs the library's dist, as the tutorial does
  '/test/postgres-notifications\.'   # counts LISTEN connections server-wide
)

# How many test files a jest selection holds (jest's own --listTests, same arguments): a phase whose
# path patterns stopped matching must fail, not pass having run nothing (no --passWithNoTests).
count_tests() { npx jest --selectProjects integration --listTests "$@" 2>/dev/null | grep -c '^/' || true; }
# Arguments given to this script (a path, a pattern) may leave a phase legitimately empty; without them it never is.
no_tests() {
  local phase=$1
  shift
  if (($# > 0)); then echo "── ${phase}: no test file matches the arguments given, skipped"; return 0; fi
  echo "── ${phase} selects no test file: its path patterns in scripts/test.sh no longer match (see 'alone')" >&2
  return 1
}

groups="${OUTBOX_TEST_GROUPS:-2}"
started=$SECONDS
failed=()
phase1_files=$(count_tests --testPathIgnorePatterns "${alone[@]}" -- "$@")
((phase1_files > 0)) || no_tests "phase 1" "$@" || failed+=("phase 1 (no test file)")
# jest deals whole shards of ceil(files / groups), so a group may be empty even with as many files
# as groups (5 files, 4 groups: 2 2 1 0): such a group is skipped, but the groups together must list
# every file of the phase.
pids=()
sharded=0
for ((i = 1; i <= groups; i++)); do
  files=$(count_tests --shard="$i/$groups" --testPathIgnorePatterns "${alone[@]}" -- "$@")
  sharded=$((sharded + files))
  if ((files == 0)); then
    echo "── integration group $i/$groups: no file in its shard (${phase1_files} files in ${groups} groups)" >"$logs/group-$i.log"
    true &
  else
    # Each group fails after 20 minutes if jest does not exit (a handle left open) rather than hang CI.
    timeout --kill-after=10 1200 npx jest --selectProjects integration --runInBand --shard="$i/$groups" --testPathIgnorePatterns "${alone[@]}" -- "$@" \
      >"$logs/group-$i.log" 2>&1 &
  fi
  pids+=($!)
done
if ((sharded != phase1_files)); then
  echo "── phase 1's groups list ${sharded} test files, the phase ${phase1_files}" >&2
  failed+=("phase 1 (groups miss files)")
fi
for ((i = 1; i <= groups; i++)); do
  if wait "${pids[$((i - 1))]}"; then
    echo "── integration group $i/$groups: passed"
    cat "$logs/group-$i.log"
  else
    failed+=("integration group $i")
  fi
done
for ((i = 1; i <= groups; i++)); do
  [[ " ${failed[*]} " == *" group $i "* ]] || continue
  echo "── integration group $i/$groups: FAILED (its whole output follows)"
  cat "$logs/group-$i.log"
done
echo "── phase 1 (${groups} groups side by side) took $((SECONDS - started)) s"

# Phase 2 takes PostgreSQL away (demo outage test): the oldest-majors run, which uses it, ends first.
if wait "$oldest_majors"; then
  grep -E '^(Tests|Test Suites):|^\[use-node\] Node ' .oldest/test.log | sed 's/^/[oldest majors] /'
else
  cat .oldest/test.log
  echo "[oldest majors] FAILED: NestJS 11 / TypeORM 0.3 (scripts/test-oldest-majors.sh)" >&2
  failed+=("oldest-majors")
fi

started=$SECONDS
status=0
echo "── integration tests that stop a shared service, one at a time"
# No --forceExit: every test closes what it opened; a run that does not exit fails after 20 minutes.
if (($(count_tests --testPathPatterns "${alone[@]}" -- "$@") > 0)); then
  timeout --kill-after=10 1200 npx jest --selectProjects integration --runInBand --testPathPatterns "${alone[@]}" -- "$@" || status=$?
else
  no_tests "phase 2" "$@" || status=1
fi
echo "── phase 2 took $((SECONDS - started)) s"
((status == 0)) || failed+=("phase 2")

if ((${#failed[@]} > 0)); then
  echo "── FAILED: ${failed[*]} (output above)" >&2
  exit 1
fi
