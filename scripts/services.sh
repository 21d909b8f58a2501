#!/usr/bin/env bash
# Test-service bring-up for the outbox project on a Debian 12 machine without
# systemd or Docker (see scripts/README.md).
#
#   scripts/services.sh up [SERVICE...]    (default: postgres kafka)
#   scripts/services.sh down [SERVICE...]  (default: everything that is running)
#   scripts/services.sh status
#   scripts/services.sh stop SERVICE...    (outage: stop, keep data and port)
#   scripts/services.sh resume SERVICE...  (start again on its data and port)
#   scripts/services.sh kafka-down | kafka-up   (broker outage simulation)
#   scripts/services.sh chromium           (install Debian's chromium for the page tests, if missing)
#   scripts/services.sh promtool           (install Debian's prometheus for `promtool test rules`, if missing)
#   scripts/services.sh kafka-javascript   (build @confluentinc/kafka-javascript's native addon, cached per machine)
#
# SERVICE: postgres mariadb kafka rabbitmq nats redis mqtt
# kafka: librdkafka 2.15.1's mock; OUTBOX_KAFKA_MOCK_LIBRDKAFKA=system for Debian's 2.0.2 one
#
# `up` always gives a FRESH service: if it is already running it is stopped,
# its data dir is wiped and it is started again (tests need a clean state).
# All state lives in $OUTBOX_SERVICES_DIR (default: $PWD/.services).
set -euo pipefail

ALL_SERVICES=(postgres mariadb kafka rabbitmq nats redis mqtt)
DEFAULT_UP=(postgres kafka)

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
KAFKA_MOCK_SRC="$SCRIPT_DIR/kafka-mock/kafka-mock.c"

RUN_DIR="${OUTBOX_SERVICES_DIR:-$PWD/.services}"
case "$RUN_DIR" in /*) ;; *) RUN_DIR="$PWD/$RUN_DIR" ;; esac
RUN_DIR="${RUN_DIR%/}"

# A clone inside a directory the service users cannot enter (a `mktemp -d` or /root clone): the
# daemons run as postgres, mysql, … and could not reach ./.services. Keep the state in a reachable
# directory of this clone's own under /tmp and make ./.services a link to it, so `. .services/env`
# and the tests find the settings where they always do.
if [[ -z "${OUTBOX_SERVICES_DIR:-}" && $EUID -eq 0 ]]; then
  if [[ -L "$RUN_DIR" ]]; then
    RUN_DIR="$(readlink -f "$RUN_DIR")"
  elif [[ ! -e "$RUN_DIR" ]] && ! runuser -u nobody -- test -x "$PWD" 2>/dev/null; then
    reachable="/tmp/outbox-services-$(printf '%s' "$PWD" | sha1sum | cut -c1-12)"
    mkdir -p "$reachable" && chmod 755 "$reachable" && ln -s "$reachable" "$RUN_DIR"
    echo "[services] $PWD is not reachable by the service users; state kept in $reachable (linked as $RUN_DIR)" >&2
    RUN_DIR="$reachable"
  fi
fi

# Ports (each overridable). Below Linux's ephemeral range (32768-60999): the tests stop a service and
# resume it on its port, and meanwhile an outgoing connection given that port as its own would keep
# the server from listening again (RabbitMQ failed to resume so in a CI run when it sat on 55672).
PG_PORT="${OUTBOX_POSTGRES_PORT:-28432}"
MARIADB_PORT="${OUTBOX_MARIADB_PORT:-28306}"
RABBITMQ_PORT="${OUTBOX_RABBITMQ_PORT:-28672}"
RABBITMQ_MGMT_PORT="${OUTBOX_RABBITMQ_MGMT_PORT:-28673}"
RABBITMQ_DIST="${OUTBOX_RABBITMQ_DIST_PORT:-28674}"
EPMD_PORT="${OUTBOX_EPMD_PORT:-28369}"
NATS_PORT="${OUTBOX_NATS_PORT:-28222}"
NATS_MONITOR_PORT="${OUTBOX_NATS_MONITOR_PORT:-28822}"
REDIS_PORT="${OUTBOX_REDIS_PORT:-28379}"
MQTT_PORT="${OUTBOX_MQTT_PORT:-28883}"
KAFKA_BROKERS_COUNT="${OUTBOX_KAFKA_BROKER_COUNT:-1}"
KAFKA_PORT="${OUTBOX_KAFKA_PORT:-0}"   # 0: a random port (broker N listens on KAFKA_PORT + N - 1)

TIMEOUT="${OUTBOX_SERVICES_TIMEOUT:-60}"
RABBITMQ_TIMEOUT="${OUTBOX_RABBITMQ_TIMEOUT:-120}"
RABBITMQ_NODE="${OUTBOX_RABBITMQ_NODENAME:-outbox-test@localhost}"

PG_DB="${OUTBOX_POSTGRES_DB:-outbox_test}"   # the database `up` creates (the URL in env names it)
MARIADB_DB=outbox_test

# Settings of a running service are saved in $RUN_DIR/<service>.settings when
# it comes up, so `status`, `down` and the env files use the ports it really
# has even if the overrides are not set in a later call.
svc_vars() {
  case "$1" in
    postgres) echo PG_PORT PG_DB ;;
    mariadb) echo MARIADB_PORT ;;
    kafka) echo KAFKA_BROKERS_COUNT KAFKA_PORT ;;
    rabbitmq) echo RABBITMQ_PORT RABBITMQ_MGMT_PORT RABBITMQ_DIST EPMD_PORT RABBITMQ_NODE ;;
    nats) echo NATS_PORT NATS_MONITOR_PORT ;;
    redis) echo REDIS_PORT ;;
    mqtt) echo MQTT_PORT ;;
  esac
}
declare -A REQUESTED=()
for _s in "${ALL_SERVICES[@]}"; do
  for _v in $(svc_vars "$_s"); do REQUESTED[$_v]="${!_v}"; done
done
unset _s _v

load_saved_settings() {
  local f="$RUN_DIR/$1.settings"
  # shellcheck disable=SC1090 # written by save_settings
  if [[ -f "$f" ]]; then source "$f"; fi
}
apply_requested_settings() {
  local v
  for v in $(svc_vars "$1"); do printf -v "$v" '%s' "${REQUESTED[$v]}"; done
}
save_settings() {
  local v
  for v in $(svc_vars "$1"); do printf '%s=%q\n' "$v" "${!v}"; done >"$RUN_DIR/$1.settings"
}

log() { printf '[services] %s\n' "$*" >&2; }
die() { printf '[services] ERROR: %s\n' "$*" >&2; exit 1; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

usage() {
  sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

valid_service() {
  local s
  for s in "${ALL_SERVICES[@]}"; do [[ "$1" == "$s" ]] && return 0; done
  return 1
}

source "$SCRIPT_DIR/services/process.sh"   # process helpers
source "$SCRIPT_DIR/services/packages.sh"   # package installation
source "$SCRIPT_DIR/services/run-dir.sh"   # run dir
source "$SCRIPT_DIR/services/postgres.sh"   # postgres
source "$SCRIPT_DIR/services/mariadb.sh"   # mariadb
source "$SCRIPT_DIR/services/kafka.sh"   # kafka (librdkafka mock cluster)
source "$SCRIPT_DIR/services/rabbitmq.sh"   # rabbitmq
source "$SCRIPT_DIR/services/nats.sh"   # nats
source "$SCRIPT_DIR/services/redis.sh"   # redis
source "$SCRIPT_DIR/services/mqtt.sh"   # mqtt (mosquitto)
source "$SCRIPT_DIR/services/kafka-javascript.sh"   # @confluentinc/kafka-javascript's native addon

# --------------------------------------------------------------------------
# env files
# --------------------------------------------------------------------------

json_escape() {
  local s="$1"
  s="${s//\\/\\\\}"
  s="${s//\"/\\\"}"
  printf '%s' "$s"
}

write_env() {
  local keys=() vals=() comments=()
  add() { keys+=("$1"); vals+=("$2"); comments+=("${3:-}"); }

  add OUTBOX_SERVICES_DIR "$RUN_DIR"
  if postgres_running; then
    add OUTBOX_TEST_POSTGRES_URL "postgres://postgres@127.0.0.1:$PG_PORT/$PG_DB" \
      "PostgreSQL $(basename "$(dirname "$(pg_bindir)")"): trust auth, durability defaults (fsync=on, synchronous_commit=on), max_connections=200"
  fi
  if mariadb_running; then
    add OUTBOX_TEST_MARIADB_URL "mysql://outbox:outbox@127.0.0.1:$MARIADB_PORT/$MARIADB_DB" \
      "MariaDB: durability defaults (innodb_flush_log_at_trx_commit=1)"
  fi
  if kafka_running && [[ -s "$KAFKA_BOOTSTRAP_FILE" ]]; then
    add OUTBOX_TEST_KAFKA_BROKERS "$(head -n1 "$KAFKA_BOOTSTRAP_FILE")" \
      "librdkafka mock cluster (test double, not a real Kafka): SIGUSR1 = brokers down, SIGUSR2 = up"
    add OUTBOX_TEST_KAFKA_MOCK_PID "$(pid_from_file "$KAFKA_PIDFILE")"
    add OUTBOX_TEST_KAFKA_MOCK_PID_FILE "$KAFKA_PIDFILE"
    add OUTBOX_TEST_KAFKA_MOCK_LOG "$KAFKA_LOG"
    add OUTBOX_TEST_KAFKA_MOCK_BIN "$(kafka_mock_binary)" "the running mock's executable (test/support/private-kafka.ts starts its own)"
    add OUTBOX_TEST_KAFKA_MOCK_LIBRDKAFKA "$(kafka_mock_librdkafka)" "the librdkafka the mock is built from (OUTBOX_KAFKA_MOCK_LIBRDKAFKA)"
  fi
  if rabbitmq_running; then
    add OUTBOX_TEST_RABBITMQ_URL "amqp://guest:guest@127.0.0.1:$RABBITMQ_PORT"
  fi
  if nats_running; then
    add OUTBOX_TEST_NATS_URL "nats://127.0.0.1:$NATS_PORT" "JetStream enabled, store in $NATS_DIR/jetstream"
  fi
  if redis_running; then
    add OUTBOX_TEST_REDIS_URL "redis://127.0.0.1:$REDIS_PORT"
  fi
  if mqtt_running; then
    add OUTBOX_TEST_MQTT_URL "mqtt://127.0.0.1:$MQTT_PORT"
  fi

  local i sh="$RUN_DIR/env.tmp" js="$RUN_DIR/env.json.tmp" sep=''
  {
    echo "# written by scripts/services.sh at $(date -Iseconds); source this file"
    for i in "${!keys[@]}"; do
      [[ -z "${comments[$i]}" ]] || echo "# ${comments[$i]}"
      printf 'export %s=%q\n' "${keys[$i]}" "${vals[$i]}"
    done
  } >"$sh"
  {
    printf '{'
    for i in "${!keys[@]}"; do
      printf '%s\n  "%s": "%s"' "$sep" "${keys[$i]}" "$(json_escape "${vals[$i]}")"
      sep=','
    done
    printf '\n}\n'
  } >"$js"
  chmod 644 "$sh" "$js"
  mv -f "$sh" "$RUN_DIR/env"
  mv -f "$js" "$RUN_DIR/env.json"
}

# --------------------------------------------------------------------------
# commands
# --------------------------------------------------------------------------

svc_log() {
  case "$1" in
    postgres) echo "$PG_DIR/postgres.log" ;;
    mariadb) echo "$MARIADB_DIR/mariadb.log" ;;
    kafka) echo "$KAFKA_LOG" ;;
    rabbitmq) echo "$RABBITMQ_DIR/log/${RABBITMQ_NODE}.log" ;;
    nats) echo "$NATS_DIR/nats.log" ;;
    redis) echo "$REDIS_DIR/redis.log" ;;
    mqtt) echo "$MQTT_DIR/mosquitto.log" ;;
  esac
}

svc_addr() {
  case "$1" in
    postgres) echo "127.0.0.1:$PG_PORT" ;;
    mariadb) echo "127.0.0.1:$MARIADB_PORT" ;;
    kafka) head -n1 "$KAFKA_BOOTSTRAP_FILE" 2>/dev/null || echo '?' ;;
    rabbitmq) echo "127.0.0.1:$RABBITMQ_PORT" ;;
    nats) echo "127.0.0.1:$NATS_PORT" ;;
    redis) echo "127.0.0.1:$REDIS_PORT" ;;
    mqtt) echo "127.0.0.1:$MQTT_PORT" ;;
  esac
}

cmd_up() {
  local svcs=("$@") s pkgs=() p=() t0
  ((${#svcs[@]})) || svcs=("${DEFAULT_UP[@]}")
  for s in "${svcs[@]}"; do valid_service "$s" || die "unknown service '$s' (one of: ${ALL_SERVICES[*]})"; done
  lock_run_dir

  for s in "${svcs[@]}"; do
    read -r -a p <<<"$(packages_for "$s")"
    pkgs+=("${p[@]}")
  done
  ensure_packages "${pkgs[@]}"

  for s in "${svcs[@]}"; do
    if "${s}_running"; then
      log "$s is running: restarting it with a fresh data dir"
    fi
    "down_$s"
    apply_requested_settings "$s"
    t0="$(now)"
    "up_$s"
    save_settings "$s"
    log "$s ready on $(svc_addr "$s") in $(elapsed "$t0")s (log: $(svc_log "$s"))"
    write_env
  done
  write_env
  log "connection settings: $RUN_DIR/env (shell) and $RUN_DIR/env.json"
}

cmd_down() {
  local svcs=("$@") s i
  ((${#svcs[@]})) || svcs=("${ALL_SERVICES[@]}")
  for s in "${svcs[@]}"; do valid_service "$s" || die "unknown service '$s' (one of: ${ALL_SERVICES[*]})"; done
  [[ -d "$RUN_DIR" ]] || { log "nothing to stop ($RUN_DIR does not exist)"; return 0; }
  lock_run_dir
  for ((i = ${#svcs[@]} - 1; i >= 0; i--)); do
    s="${svcs[$i]}"
    if "${s}_running" || { [[ "$s" == rabbitmq ]] && [[ -s "$EPMD_PIDFILE" ]]; }; then
      "down_$s"
      log "$s stopped"
    fi
  done
  write_env
}

# stop SERVICE...: an outage that keeps the data dir and the saved ports
cmd_stop() {
  (($#)) || die "stop needs the services to stop (one or more of: ${ALL_SERVICES[*]})"
  local s
  for s in "$@"; do
    valid_service "$s" || die "unknown service '$s' (one of: ${ALL_SERVICES[*]})"
    [[ "$s" != kafka ]] || die "kafka: the mock keeps its data in memory only; use kafka-down / kafka-up for an outage"
  done
  cmd_down "$@"
}

# resume SERVICE...: start stopped services again on their data dir and saved ports
cmd_resume() {
  (($#)) || die "resume needs the services to start (one or more of: ${ALL_SERVICES[*]})"
  local s t0
  for s in "$@"; do
    valid_service "$s" || die "unknown service '$s' (one of: ${ALL_SERVICES[*]})"
    [[ "$s" != kafka ]] || die "kafka: the mock keeps its data in memory only; use kafka-down / kafka-up for an outage"
    if [[ ! -f "$RUN_DIR/$s.settings" ]] || ! "${s}_has_data"; then
      die "$s: nothing to resume in $RUN_DIR (never started there, or wiped); use: up $s"
    fi
  done
  lock_run_dir
  for s in "$@"; do
    if "${s}_running"; then
      log "$s is already running on $(svc_addr "$s")"
      continue
    fi
    t0="$(now)"
    "start_$s"
    log "$s resumed on $(svc_addr "$s") with its data in $(elapsed "$t0")s (log: $(svc_log "$s"))"
    write_env
  done
  write_env
}

cmd_status() {
  local s state any=1
  for s in "${ALL_SERVICES[@]}"; do
    if "${s}_running" 2>/dev/null; then
      state="running  $(svc_addr "$s")"
      any=0
    else
      state="stopped"
    fi
    printf '%-9s %s\n' "$s" "$state"
  done
  if [[ -f "$RUN_DIR/env" ]]; then printf 'env: %s\n' "$RUN_DIR/env"; fi
  return "$any"
}

# The headless browser of the console page tests: Debian's package, never a browser download.
cmd_chromium() {
  if [[ -x /usr/bin/chromium ]]; then
    log "chromium: /usr/bin/chromium"
    return
  fi
  ensure_packages chromium
}

# promtool checks and unit-tests the shipped alert rules (deploy/prometheus/); Debian's prometheus
# package ships it. Only the binary is used: no Prometheus server is started.
cmd_promtool() {
  if command -v promtool >/dev/null 2>&1; then
    log "promtool: $(command -v promtool)"
    return
  fi
  ensure_packages prometheus
}

main() {
  local cmd="${1:-}" s
  for s in "${ALL_SERVICES[@]}"; do load_saved_settings "$s"; done
  [[ $# -gt 0 ]] && shift
  case "$cmd" in
    up) cmd_up "$@" ;;
    down) cmd_down "$@" ;;
    stop) cmd_stop "$@" ;;
    resume) cmd_resume "$@" ;;
    status) cmd_status || true ;;
    kafka-down) kafka_signal USR1 down ;;
    kafka-up) kafka_signal USR2 up ;;
    chromium) cmd_chromium ;;
    promtool) cmd_promtool ;;
    kafka-javascript) cmd_kafka_javascript ;;
    -h | --help | help) usage ;;
    *) usage ;;
  esac
}

main "$@"
