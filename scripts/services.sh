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
#
# SERVICE: postgres mariadb kafka rabbitmq nats redis mqtt
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

# Ports (each overridable).
PG_PORT="${OUTBOX_POSTGRES_PORT:-55432}"
MARIADB_PORT="${OUTBOX_MARIADB_PORT:-53306}"
RABBITMQ_PORT="${OUTBOX_RABBITMQ_PORT:-55672}"
RABBITMQ_MGMT_PORT="${OUTBOX_RABBITMQ_MGMT_PORT:-55673}"
RABBITMQ_DIST="${OUTBOX_RABBITMQ_DIST_PORT:-55674}"
EPMD_PORT="${OUTBOX_EPMD_PORT:-54369}"
NATS_PORT="${OUTBOX_NATS_PORT:-54222}"
NATS_MONITOR_PORT="${OUTBOX_NATS_MONITOR_PORT:-58222}"
REDIS_PORT="${OUTBOX_REDIS_PORT:-56379}"
MQTT_PORT="${OUTBOX_MQTT_PORT:-51883}"
KAFKA_BROKERS_COUNT="${OUTBOX_KAFKA_BROKER_COUNT:-1}"

TIMEOUT="${OUTBOX_SERVICES_TIMEOUT:-60}"
RABBITMQ_TIMEOUT="${OUTBOX_RABBITMQ_TIMEOUT:-120}"
RABBITMQ_NODE="${OUTBOX_RABBITMQ_NODENAME:-outbox-test@localhost}"

PG_DB=outbox_test
MARIADB_DB=outbox_test

# Settings of a running service are saved in $RUN_DIR/<service>.settings when
# it comes up, so `status`, `down` and the env files use the ports it really
# has even if the overrides are not set in a later call.
svc_vars() {
  case "$1" in
    postgres) echo PG_PORT ;;
    mariadb) echo MARIADB_PORT ;;
    kafka) echo KAFKA_BROKERS_COUNT ;;
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
  sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

valid_service() {
  local s
  for s in "${ALL_SERVICES[@]}"; do [[ "$1" == "$s" ]] && return 0; done
  return 1
}

# --------------------------------------------------------------------------
# process helpers
# --------------------------------------------------------------------------

# pid_from_file FILE -> prints the first line if it is a number
pid_from_file() {
  local f="$1" pid
  [[ -r "$f" ]] || return 1
  pid="$(head -n1 "$f" 2>/dev/null | tr -dc '0-9')"
  [[ -n "$pid" ]] || return 1
  printf '%s\n' "$pid"
}

# pid_alive PID COMM_REGEX: the process exists and its name matches (guards
# against a stale pid file whose pid was reused by something else).
pid_alive() {
  local pid="$1" re="$2" comm
  [[ -n "$pid" && -d "/proc/$pid" ]] || return 1
  [[ "$(pid_state "$pid")" != Z ]] || return 1
  comm="$(cat "/proc/$pid/comm" 2>/dev/null || true)"
  [[ "$comm" =~ $re ]]
}

# single-letter process state (R, S, Z, ...) or nothing if gone
pid_state() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 0
  stat="${stat##*) }"
  printf '%s' "${stat%% *}"
}

pidfile_alive() {
  local pid
  pid="$(pid_from_file "$1")" || return 1
  pid_alive "$pid" "$2"
}

# wait_gone PID SECONDS: wait for a process to exit; 1 if still there.
wait_gone() {
  local pid="$1" deadline=$((SECONDS + $2))
  # a zombie (exited, not yet reaped) counts as gone
  while [[ -d "/proc/$pid" && "$(pid_state "$pid")" != Z ]]; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
  return 0
}

# kill_pid PID NAME: TERM, wait up to 15 s, then KILL.
kill_pid() {
  local pid="$1" name="$2"
  [[ -d "/proc/$pid" ]] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  if ! wait_gone "$pid" 15; then
    log "$name (pid $pid) did not stop after SIGTERM; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    wait_gone "$pid" 5 || true
  fi
}

port_busy() {
  ss -Hltn "sport = :$1" 2>/dev/null | grep -q .
}

port_owner() {
  ss -Hltnp "sport = :$1" 2>/dev/null | sed -n 's/.*users:(\(.*\))/\1/p' | head -n1
}

ensure_port_free() {
  local port="$1" svc="$2"
  if port_busy "$port"; then
    die "$svc: port $port is already in use by $(port_owner "$port") - stop it or set the port override (see scripts/README.md)"
  fi
}

# wait_until SVC LOGFILE DEADLINE_S CMD...: poll CMD every 0.2 s.
wait_until() {
  local svc="$1" logfile="$2" secs="$3"
  shift 3
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      log "$svc: last lines of $logfile:"
      tail -n 20 "$logfile" >&2 2>/dev/null || true
      die "$svc did not become ready within ${secs}s - see $logfile"
    fi
    sleep 0.2
  done
}

# start a long-running foreground process detached from our stdio/session
spawn() {
  local logfile="$1"
  shift
  setsid nohup "$@" >>"$logfile" 2>&1 </dev/null 9>&- &
  SPAWNED_PID=$!
}

safe_rm_dir() {
  local d="$1"
  [[ -n "$d" && "$d" == "$RUN_DIR"/* ]] || die "refusing to remove '$d' (outside $RUN_DIR)"
  rm -rf -- "$d"
}

# --------------------------------------------------------------------------
# package installation
# --------------------------------------------------------------------------

APT_UPDATED=0
POLICY_RC=/usr/sbin/policy-rc.d
POLICY_RC_BACKUP=""
POLICY_RC_INSTALLED=0
DAEMON_NAMES='^(mariadbd|mysqld|mysqld_safe|mariadbd-safe|redis-server|mosquitto|nats-server|epmd|beam\.smp|rabbitmq-server|postgres)$'

cleanup() {
  if ((POLICY_RC_INSTALLED)); then
    rm -f "$POLICY_RC"
    if [[ -n "$POLICY_RC_BACKUP" && -e "$POLICY_RC_BACKUP" ]]; then
      mv -f "$POLICY_RC_BACKUP" "$POLICY_RC"
    fi
    POLICY_RC_INSTALLED=0
  fi
}
trap cleanup EXIT

pkg_installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

daemon_pids() {
  local pid comm
  for pid in /proc/[0-9]*; do
    comm="$(cat "$pid/comm" 2>/dev/null || true)"
    [[ "$comm" =~ $DAEMON_NAMES ]] && printf '%s\n' "${pid#/proc/}"
  done
  return 0
}

# ensure_packages PKG...: apt-get install what is missing, with a policy-rc.d
# that forbids postinst scripts to start daemons. Any daemon that still got
# started during the install is stopped again (by pid) so it cannot hold ports.
ensure_packages() {
  local missing=() p
  for p in "$@"; do pkg_installed "$p" || missing+=("$p"); done
  ((${#missing[@]})) || return 0
  [[ $EUID -eq 0 ]] || die "need root to install: ${missing[*]}"

  local t0 before after pid
  t0="$(now)"
  before="$(daemon_pids | sort)"
  if [[ -e "$POLICY_RC" ]]; then
    POLICY_RC_BACKUP="$(mktemp /usr/sbin/.policy-rc.d.outbox.XXXXXX)"
    cp -p "$POLICY_RC" "$POLICY_RC_BACKUP"
  fi
  POLICY_RC_INSTALLED=1
  printf '#!/bin/sh\n# temporary, written by outbox scripts/services.sh\nexit 101\n' >"$POLICY_RC"
  chmod 755 "$POLICY_RC"

  if ((!APT_UPDATED)); then
    log "apt-get update (missing: ${missing[*]})"
    apt-get -o DPkg::Lock::Timeout=300 update -qq >&2 9>&- || die "apt-get update failed"
    APT_UPDATED=1
  fi
  log "installing ${missing[*]}"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    -o DPkg::Lock::Timeout=300 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
    "${missing[@]}" >&2 9>&-; then
    cleanup
    die "apt-get install ${missing[*]} failed"
  fi
  cleanup

  after="$(daemon_pids | sort)"
  for pid in $(comm -13 <(printf '%s\n' "$before") <(printf '%s\n' "$after")); do
    if [[ -d "/proc/$pid" ]]; then
      log "stopping $(cat "/proc/$pid/comm" 2>/dev/null) (pid $pid) started by the package install"
      kill_pid "$pid" "package daemon"
    fi
  done
  log "installed ${missing[*]} in $(elapsed "$t0")s"
}

packages_for() {
  case "$1" in
    postgres) echo postgresql-15 ;;
    mariadb) echo mariadb-server mariadb-client ;;
    kafka) echo librdkafka-dev gcc libc6-dev pkg-config ;;
    rabbitmq) echo rabbitmq-server ;;
    nats) echo nats-server ;;
    redis) echo redis-server redis-tools ;;
    mqtt) echo mosquitto mosquitto-clients ;;
  esac
}

# --------------------------------------------------------------------------
# run dir
# --------------------------------------------------------------------------

init_run_dir() {
  mkdir -p "$RUN_DIR"
  chmod 755 "$RUN_DIR"
}

# fd 9 holds the lock: every daemon we start gets `9>&-` so it cannot inherit it
lock_run_dir() {
  init_run_dir
  exec 9>"$RUN_DIR/.lock"
  flock -w 600 9 || die "another services.sh holds $RUN_DIR/.lock"
}

# the service users (postgres, mysql, rabbitmq, mosquitto) must reach RUN_DIR
check_traversable() {
  local user="$1" svc="$2"
  if ! runuser -u "$user" -- test -x "$RUN_DIR" 2>/dev/null; then
    die "$svc: user $user cannot reach $RUN_DIR (a parent dir is not world-traversable); set OUTBOX_SERVICES_DIR to e.g. /tmp/outbox-services"
  fi
}

# --------------------------------------------------------------------------
# postgres
# --------------------------------------------------------------------------

pg_bindir() {
  local d
  if [[ -x /usr/lib/postgresql/15/bin/pg_ctl ]]; then
    echo /usr/lib/postgresql/15/bin
    return
  fi
  d="$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n1)"
  [[ -n "$d" ]] || die "postgres: no PostgreSQL server binaries under /usr/lib/postgresql"
  echo "$d"
}

PG_DIR="$RUN_DIR/postgres"
postgres_running() { pidfile_alive "$PG_DIR/data/postmaster.pid" '^postgres$'; }

pg_as() { runuser -u postgres -- "$@"; }

up_postgres() {
  local bin
  bin="$(pg_bindir)"
  check_traversable postgres postgres
  ensure_port_free "$PG_PORT" postgres
  safe_rm_dir "$PG_DIR"
  mkdir -p "$PG_DIR/sock"
  chown -R postgres:postgres "$PG_DIR"
  chmod 755 "$PG_DIR"
  (cd / && pg_as "$bin/initdb" -D "$PG_DIR/data" --no-sync -A trust -U postgres \
    -E UTF8 --locale=C.UTF-8 >"$PG_DIR/initdb.log" 2>&1) ||
    { tail -n 20 "$PG_DIR/initdb.log" >&2; die "postgres: initdb failed - see $PG_DIR/initdb.log"; }
  start_postgres
  "$bin/psql" -q -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres \
    -c "CREATE DATABASE $PG_DB" >/dev/null || die "postgres: CREATE DATABASE failed"
}

postgres_has_data() { [[ -f "$PG_DIR/data/PG_VERSION" ]]; }

# starts the server on the data dir as it is (used by `up` after initdb, and by `resume`)
start_postgres() {
  local bin
  bin="$(pg_bindir)"
  check_traversable postgres postgres
  ensure_port_free "$PG_PORT" postgres
  # durability settings are left at their defaults (fsync=on, synchronous_commit=on)
  (cd / && pg_as "$bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/postgres.log" -w -t "$TIMEOUT" \
    -o "-p $PG_PORT -k $PG_DIR/sock -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=on" \
    start >/dev/null 9>&-) || { tail -n 20 "$PG_DIR/postgres.log" >&2; die "postgres did not start - see $PG_DIR/postgres.log"; }
  wait_until postgres "$PG_DIR/postgres.log" "$TIMEOUT" \
    "$bin/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -d postgres -U postgres
}

down_postgres() {
  postgres_running || return 0
  local bin
  bin="$(pg_bindir)"
  (cd / && pg_as "$bin/pg_ctl" -D "$PG_DIR/data" -m fast -w -t 60 stop >/dev/null 2>&1) || true
  local pid
  if pid="$(pid_from_file "$PG_DIR/data/postmaster.pid")" && pid_alive "$pid" '^postgres$'; then
    kill_pid "$pid" postgres
  fi
}

# --------------------------------------------------------------------------
# mariadb
# --------------------------------------------------------------------------

MARIADB_DIR="$RUN_DIR/mariadb"
MARIADB_SOCK="$MARIADB_DIR/mariadb.sock"
mariadb_running() { pidfile_alive "$MARIADB_DIR/mariadb.pid" '^(mariadbd|mysqld)$'; }
mariadb_ping() { mariadb-admin --no-defaults -uroot -S "$MARIADB_SOCK" --connect-timeout=2 ping; }

up_mariadb() {
  check_traversable mysql mariadb
  ensure_port_free "$MARIADB_PORT" mariadb
  safe_rm_dir "$MARIADB_DIR"
  mkdir -p "$MARIADB_DIR/data"
  chown -R mysql:mysql "$MARIADB_DIR"
  chmod 755 "$MARIADB_DIR"
  (cd / && mariadb-install-db --no-defaults --user=mysql --datadir="$MARIADB_DIR/data" \
    --auth-root-authentication-method=socket --skip-test-db --skip-name-resolve \
    >"$MARIADB_DIR/install-db.log" 2>&1) ||
    { tail -n 20 "$MARIADB_DIR/install-db.log" >&2; die "mariadb: mariadb-install-db failed - see $MARIADB_DIR/install-db.log"; }
  start_mariadb
  mariadb --no-defaults -uroot -S "$MARIADB_SOCK" -e "
    CREATE DATABASE \`$MARIADB_DB\`;
    CREATE USER 'outbox'@'%' IDENTIFIED BY 'outbox';
    CREATE USER 'outbox'@'localhost' IDENTIFIED BY 'outbox';
    GRANT ALL PRIVILEGES ON *.* TO 'outbox'@'%';
    GRANT ALL PRIVILEGES ON *.* TO 'outbox'@'localhost';
    FLUSH PRIVILEGES;" || die "mariadb: creating database/user failed"
  mariadb --no-defaults -uoutbox -poutbox -h127.0.0.1 -P"$MARIADB_PORT" -e 'SELECT 1' "$MARIADB_DB" >/dev/null ||
    die "mariadb: user outbox cannot connect over 127.0.0.1:$MARIADB_PORT"
}

mariadb_has_data() { [[ -d "$MARIADB_DIR/data/mysql" ]]; }

start_mariadb() {
  check_traversable mysql mariadb
  ensure_port_free "$MARIADB_PORT" mariadb
  local mariadbd
  mariadbd="$(command -v mariadbd || echo /usr/sbin/mariadbd)"
  spawn "$MARIADB_DIR/startup.log" "$mariadbd" --no-defaults --user=mysql \
    --datadir="$MARIADB_DIR/data" --socket="$MARIADB_SOCK" --port="$MARIADB_PORT" \
    --bind-address=127.0.0.1 --pid-file="$MARIADB_DIR/mariadb.pid" \
    --log-error="$MARIADB_DIR/mariadb.log" --skip-name-resolve --max-connections=200
  wait_until mariadb "$MARIADB_DIR/mariadb.log" "$TIMEOUT" mariadb_ping
}

down_mariadb() {
  mariadb_running || return 0
  local pid
  pid="$(pid_from_file "$MARIADB_DIR/mariadb.pid")"
  mariadb-admin --no-defaults -uroot -S "$MARIADB_SOCK" --connect-timeout=5 shutdown >/dev/null 2>&1 || true
  wait_gone "$pid" 30 || kill_pid "$pid" mariadb
}

# --------------------------------------------------------------------------
# kafka (librdkafka mock cluster)
# --------------------------------------------------------------------------

KAFKA_DIR="$RUN_DIR/kafka"
KAFKA_BIN="$RUN_DIR/bin/kafka-mock"
KAFKA_PIDFILE="$KAFKA_DIR/kafka-mock.pid"
KAFKA_BOOTSTRAP_FILE="$KAFKA_DIR/bootstrap"
KAFKA_LOG="$KAFKA_DIR/kafka-mock.log"
kafka_running() { pidfile_alive "$KAFKA_PIDFILE" '^kafka-mock$'; }

build_kafka_mock() {
  [[ -f "$KAFKA_MOCK_SRC" ]] || die "kafka: missing $KAFKA_MOCK_SRC"
  if [[ -x "$KAFKA_BIN" && "$KAFKA_BIN" -nt "$KAFKA_MOCK_SRC" ]]; then return 0; fi
  mkdir -p "$RUN_DIR/bin"
  log "compiling $KAFKA_BIN"
  local flags
  flags="$(pkg-config --cflags --libs rdkafka)" || die "kafka: pkg-config rdkafka failed (librdkafka-dev missing?)"
  # shellcheck disable=SC2086 # flags must split
  gcc -O2 -Wall -o "$KAFKA_BIN.tmp" "$KAFKA_MOCK_SRC" $flags || die "kafka: compiling $KAFKA_MOCK_SRC failed"
  mv -f "$KAFKA_BIN.tmp" "$KAFKA_BIN"
}

up_kafka() {
  build_kafka_mock
  safe_rm_dir "$KAFKA_DIR"
  mkdir -p "$KAFKA_DIR"
  spawn "$KAFKA_LOG" "$KAFKA_BIN" "$KAFKA_BOOTSTRAP_FILE" "$KAFKA_PIDFILE" "$KAFKA_BROKERS_COUNT"
  local pid="$SPAWNED_PID"
  wait_until kafka "$KAFKA_LOG" "$TIMEOUT" kafka_ready "$pid"
}

kafka_ready() { [[ -s "$KAFKA_BOOTSTRAP_FILE" && -d "/proc/$1" ]]; }

down_kafka() {
  local pid
  pid="$(pid_from_file "$KAFKA_PIDFILE")" || return 0
  pid_alive "$pid" '^kafka-mock$' || return 0
  kill_pid "$pid" kafka-mock
  rm -f "$KAFKA_PIDFILE" "$KAFKA_BOOTSTRAP_FILE"
}

# kafka_signal SIGNAL WORD: signal the mock and wait for its log line
kafka_signal() {
  local sig="$1" word="$2" pid before
  if ! pid="$(pid_from_file "$KAFKA_PIDFILE")" || ! pid_alive "$pid" '^kafka-mock$'; then
    die "kafka mock is not running (no live pid in $KAFKA_PIDFILE)"
  fi
  before="$(grep -c "$sig:" "$KAFKA_LOG" 2>/dev/null || true)"
  kill "-$sig" "$pid"
  local deadline=$((SECONDS + 10))
  while (($(grep -c "$sig:" "$KAFKA_LOG" 2>/dev/null || true) <= before)); do
    ((SECONDS < deadline)) || die "kafka mock did not log the $sig transition - see $KAFKA_LOG"
    sleep 0.05
  done
  log "kafka mock broker(s) $word (pid $pid, bootstrap $(cat "$KAFKA_BOOTSTRAP_FILE" 2>/dev/null))"
}

# --------------------------------------------------------------------------
# rabbitmq
# --------------------------------------------------------------------------

RABBITMQ_DIR="$RUN_DIR/rabbitmq"
RABBITMQ_PIDFILE="$RABBITMQ_DIR/rabbitmq.pid"
EPMD_PIDFILE="$RABBITMQ_DIR/epmd.pid"

# The Debian wrappers (/usr/sbin/rabbitmq*) re-exec as user rabbitmq via `su`,
# which keeps these variables.
rabbitmq_env() {
  export RABBITMQ_NODENAME="$RABBITMQ_NODE"
  export RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
  export RABBITMQ_NODE_PORT="$RABBITMQ_PORT"
  export RABBITMQ_DIST_PORT="$RABBITMQ_DIST"
  export RABBITMQ_MNESIA_BASE="$RABBITMQ_DIR/mnesia"
  export RABBITMQ_LOG_BASE="$RABBITMQ_DIR/log"
  export RABBITMQ_PID_FILE="$RABBITMQ_PIDFILE"
  export RABBITMQ_ENABLED_PLUGINS_FILE="$RABBITMQ_DIR/enabled_plugins"
  export RABBITMQ_CONFIG_FILE="$RABBITMQ_DIR/rabbitmq.conf"
  export RABBITMQ_ADVANCED_CONFIG_FILE="$RABBITMQ_DIR/advanced.config"
  # distribution listener on loopback only; the management port is only used
  # if rabbitmq_management gets enabled in enabled_plugins (off by default)
  export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1} -rabbitmq_management tcp_config [{port,$RABBITMQ_MGMT_PORT},{ip,\"127.0.0.1\"}]"
  # a private epmd on its own port: never shared with a system epmd
  export ERL_EPMD_PORT="$EPMD_PORT"
  export ERL_EPMD_ADDRESS=127.0.0.1
}

rabbitmq_running() { pidfile_alive "$RABBITMQ_PIDFILE" '^beam\.smp$'; }

up_rabbitmq() {
  check_traversable rabbitmq rabbitmq
  ensure_port_free "$RABBITMQ_PORT" rabbitmq
  ensure_port_free "$RABBITMQ_DIST" "rabbitmq (distribution port)"
  stop_epmd
  ensure_port_free "$EPMD_PORT" "rabbitmq (epmd)"
  safe_rm_dir "$RABBITMQ_DIR"
  mkdir -p "$RABBITMQ_DIR/mnesia" "$RABBITMQ_DIR/log"
  printf '[].\n' >"$RABBITMQ_DIR/enabled_plugins"
  printf 'loopback_users.guest = true\nlog.file.level = info\n' >"$RABBITMQ_DIR/rabbitmq.conf"
  printf '[].\n' >"$RABBITMQ_DIR/advanced.config"
  chown -R rabbitmq:rabbitmq "$RABBITMQ_DIR"
  chmod 755 "$RABBITMQ_DIR"
  start_rabbitmq
}

rabbitmq_has_data() { [[ -d "$RABBITMQ_DIR/mnesia" && -f "$RABBITMQ_DIR/rabbitmq.conf" ]]; }

# epmd + node on the existing mnesia dir (durable queues and persistent messages survive)
start_rabbitmq() {
  check_traversable rabbitmq rabbitmq
  ensure_port_free "$RABBITMQ_PORT" rabbitmq
  ensure_port_free "$RABBITMQ_DIST" "rabbitmq (distribution port)"
  stop_epmd
  ensure_port_free "$EPMD_PORT" "rabbitmq (epmd)"
  rabbitmq_env

  local epmd
  epmd="$(command -v epmd || true)"
  [[ -n "$epmd" ]] || die "rabbitmq: epmd not found (erlang-base missing?)"
  spawn "$RABBITMQ_DIR/log/epmd.log" "$epmd" -port "$EPMD_PORT" -address 127.0.0.1
  echo "$SPAWNED_PID" >"$EPMD_PIDFILE"
  wait_until rabbitmq "$RABBITMQ_DIR/log/epmd.log" 10 port_busy "$EPMD_PORT"

  /usr/sbin/rabbitmq-server -detached >>"$RABBITMQ_DIR/log/startup.log" 2>&1 </dev/null 9>&- ||
    die "rabbitmq-server -detached failed - see $RABBITMQ_DIR/log/startup.log"
  local logf="$RABBITMQ_DIR/log/${RABBITMQ_NODE}.log"
  # `rabbitmqctl wait` blocks until the pid file exists and the app has booted
  timeout "$RABBITMQ_TIMEOUT" /usr/sbin/rabbitmqctl wait --timeout "$RABBITMQ_TIMEOUT" "$RABBITMQ_PIDFILE" \
    >>"$RABBITMQ_DIR/log/startup.log" 2>&1 </dev/null || {
    tail -n 20 "$logf" >&2 2>/dev/null || tail -n 20 "$RABBITMQ_DIR/log/startup.log" >&2 || true
    die "rabbitmq did not become ready within ${RABBITMQ_TIMEOUT}s - see $logf and $RABBITMQ_DIR/log/startup.log"
  }
  wait_until rabbitmq "$logf" "$TIMEOUT" port_busy "$RABBITMQ_PORT"
}

stop_epmd() {
  local pid
  if pid="$(pid_from_file "$EPMD_PIDFILE")" && pid_alive "$pid" '^epmd$'; then
    kill_pid "$pid" epmd
  fi
  rm -f "$EPMD_PIDFILE"
}

down_rabbitmq() {
  local pid
  if pid="$(pid_from_file "$RABBITMQ_PIDFILE")" && pid_alive "$pid" '^beam\.smp$'; then
    rabbitmq_env
    timeout 60 /usr/sbin/rabbitmqctl shutdown >/dev/null 2>&1 </dev/null || true
    wait_gone "$pid" 15 || kill_pid "$pid" rabbitmq
  fi
  stop_epmd
}

# --------------------------------------------------------------------------
# nats
# --------------------------------------------------------------------------

NATS_DIR="$RUN_DIR/nats"
nats_running() { pidfile_alive "$NATS_DIR/nats.pid" '^nats-server$'; }

http_ok() {
  if command -v curl >/dev/null; then
    curl -fsS -m 2 "http://127.0.0.1:$1$2" >/dev/null
  else
    local line
    exec 8<>"/dev/tcp/127.0.0.1/$1" || return 1
    printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&8
    IFS= read -r -t 2 line <&8 || true
    exec 8<&-
    [[ "$line" == *" 200 "* ]]
  fi
}

up_nats() {
  ensure_port_free "$NATS_PORT" nats
  ensure_port_free "$NATS_MONITOR_PORT" "nats (monitor)"
  safe_rm_dir "$NATS_DIR"
  mkdir -p "$NATS_DIR/jetstream"
  start_nats
}

nats_has_data() { [[ -d "$NATS_DIR/jetstream" ]]; }

# JetStream keeps its streams in $NATS_DIR/jetstream across a stop/resume
start_nats() {
  ensure_port_free "$NATS_PORT" nats
  ensure_port_free "$NATS_MONITOR_PORT" "nats (monitor)"
  spawn "$NATS_DIR/nats.log" nats-server -a 127.0.0.1 -p "$NATS_PORT" \
    -m "$NATS_MONITOR_PORT" -js -sd "$NATS_DIR/jetstream" -P "$NATS_DIR/nats.pid"
  wait_until nats "$NATS_DIR/nats.log" "$TIMEOUT" http_ok "$NATS_MONITOR_PORT" /healthz
}

down_nats() {
  local pid
  pid="$(pid_from_file "$NATS_DIR/nats.pid")" || return 0
  pid_alive "$pid" '^nats-server$' || return 0
  kill_pid "$pid" nats-server
}

# --------------------------------------------------------------------------
# redis
# --------------------------------------------------------------------------

REDIS_DIR="$RUN_DIR/redis"
redis_running() { pidfile_alive "$REDIS_DIR/redis.pid" '^redis-server$'; }

up_redis() {
  ensure_port_free "$REDIS_PORT" redis
  safe_rm_dir "$REDIS_DIR"
  mkdir -p "$REDIS_DIR"
  start_redis
}

redis_has_data() { [[ -d "$REDIS_DIR" ]]; }

# no persistence: a resumed Redis starts empty (pub/sub keeps nothing anyway)
start_redis() {
  ensure_port_free "$REDIS_PORT" redis
  (cd "$REDIS_DIR" && redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --daemonize yes \
    --save '' --appendonly no --dir "$REDIS_DIR" --pidfile "$REDIS_DIR/redis.pid" \
    --logfile "$REDIS_DIR/redis.log" </dev/null >/dev/null 2>&1 9>&-) ||
    die "redis-server failed to start - see $REDIS_DIR/redis.log"
  wait_until redis "$REDIS_DIR/redis.log" "$TIMEOUT" redis_ping
}

redis_ping() { [[ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" == PONG ]]; }

down_redis() {
  local pid
  pid="$(pid_from_file "$REDIS_DIR/redis.pid")" || return 0
  pid_alive "$pid" '^redis-server$' || return 0
  redis-cli -h 127.0.0.1 -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
  wait_gone "$pid" 15 || kill_pid "$pid" redis-server
}

# --------------------------------------------------------------------------
# mqtt (mosquitto)
# --------------------------------------------------------------------------

MQTT_DIR="$RUN_DIR/mqtt"
mqtt_running() { pidfile_alive "$MQTT_DIR/mosquitto.pid" '^mosquitto$'; }

mqtt_ping() {
  mosquitto_sub -h 127.0.0.1 -p "$MQTT_PORT" -t "\$SYS/broker/version" -C 1 -W 1
}

up_mqtt() {
  check_traversable mosquitto mqtt
  ensure_port_free "$MQTT_PORT" mqtt
  safe_rm_dir "$MQTT_DIR"
  mkdir -p "$MQTT_DIR"
  # mosquitto drops to user mosquitto and exits silently if it cannot write
  # its pid/log files: the dir belongs to that user.
  cat >"$MQTT_DIR/mosquitto.conf" <<EOF
# written by scripts/services.sh
listener $MQTT_PORT 127.0.0.1
allow_anonymous true
# saved on shutdown and loaded on start: persistent sessions (clean start off, session
# expiry set), their subscriptions and queued QoS>0 messages survive stop/resume
persistence true
persistence_location $MQTT_DIR/
pid_file $MQTT_DIR/mosquitto.pid
log_dest file $MQTT_DIR/mosquitto.log
log_type error
log_type warning
log_type notice
log_type information
EOF
  chown -R mosquitto: "$MQTT_DIR"
  chmod 755 "$MQTT_DIR"
  start_mqtt
}

mqtt_has_data() { [[ -f "$MQTT_DIR/mosquitto.conf" ]]; }

start_mqtt() {
  check_traversable mosquitto mqtt
  ensure_port_free "$MQTT_PORT" mqtt
  mosquitto -c "$MQTT_DIR/mosquitto.conf" -d </dev/null >/dev/null 2>&1 9>&- ||
    die "mosquitto failed to start - see $MQTT_DIR/mosquitto.log"
  wait_until mqtt "$MQTT_DIR/mosquitto.log" "$TIMEOUT" mqtt_ping
}

down_mqtt() {
  local pid
  pid="$(pid_from_file "$MQTT_DIR/mosquitto.pid")" || return 0
  pid_alive "$pid" '^mosquitto$' || return 0
  kill_pid "$pid" mosquitto
}

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
    -h | --help | help) usage ;;
    *) usage ;;
  esac
}

main "$@"
