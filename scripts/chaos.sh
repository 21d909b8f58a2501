#!/usr/bin/env bash
# The chaos suite: several relay processes and a writer on PostgreSQL + the Kafka test broker while
# relays are killed (-9) and stalled (SIGSTOP), the broker goes down, PostgreSQL restarts,
# transactions roll back and publishes fail at random; then a consumer ledger checks the promises.
#
#   npm run chaos                    # default size, about 3-4 minutes
#   npm run chaos -- --delivery=wal  # the same faults with delivery: 'wal' (one relay streams the slot)
#   npm run chaos -- --delivery=wal --wal-write=message   # the WAL mode's WAL-only write (default: rows)
#   npm run chaos -- --full          # larger: more relays, kills, outages (about 9 minutes)
#   npm run chaos -- --seed=1234     # replay a run's random choices (timing still varies)
#   CHAOS_SELF_TEST=drop npm run chaos   # corrupts the ledger on purpose: must exit non-zero
#   (the checks and the drop/ghost/reorder/dup corruptions also run as unit tests, test/chaos/analysis.spec.ts)
#
# Starts PostgreSQL and the Kafka test broker with scripts/services.sh (OUTBOX_SERVICES_DIR,
# OUTBOX_POSTGRES_PORT... are honoured, see scripts/README.md) and stops them on exit. Exit code 0
# only if every promise held; logs and report.md in $OUTBOX_SERVICES_DIR/chaos-runs/<run>/.
set -euo pipefail
cd "$(dirname "$0")/.."
export OUTBOX_SERVICES_DIR="${OUTBOX_SERVICES_DIR:-$PWD/.services}"

npx tsc -p test/chaos/tsconfig.json

pids_file="$(mktemp /tmp/outbox-chaos-pids.XXXXXX)"
export CHAOS_PID_FILE="$pids_file"
cleanup() {
  local code=$? pid
  # Every process the run forked is listed by pid; end those still alive (continued first, in
  # case one was stopped), checking that the pid is still one of ours and not a reused number.
  while read -r pid; do
    [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || continue
    if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'dist/chaos/test/chaos/'; then
      kill -CONT "$pid" 2>/dev/null || true
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done <"$pids_file"
  rm -f "$pids_file"
  bash scripts/services.sh down postgres kafka >/dev/null 2>&1 || true
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

bash scripts/services.sh up postgres kafka
node dist/chaos/test/chaos/main.js "$@"
