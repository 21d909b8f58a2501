# scripts/services.sh, kafka (librdkafka mock cluster): sourced by services.sh, not run on its own.

KAFKA_DIR="$RUN_DIR/kafka"
KAFKA_BIN="$RUN_DIR/bin/kafka-mock"
KAFKA_PIDFILE="$KAFKA_DIR/kafka-mock.pid"
KAFKA_BOOTSTRAP_FILE="$KAFKA_DIR/bootstrap"
KAFKA_LOG="$KAFKA_DIR/kafka-mock.log"
kafka_running() { pidfile_alive "$KAFKA_PIDFILE" '^kafka-mock$'; }

# Which librdkafka the mock comes from (OUTBOX_KAFKA_MOCK_LIBRDKAFKA; scripts/README.md compares them):
#   bundled (default): the librdkafka 2.15.1 that @confluentinc/kafka-javascript ships, built by
#            `scripts/services.sh kafka-javascript` (cached): Metadata up to v12, Produce up to v10,
#            and kafka-mock.c names broker 1 as controller, so kafkajs' idempotent producer works;
#   system:  Debian's librdkafka-dev 2.0.2, the earlier broker: Metadata v0-v2, Produce v0-v7,
#            controller 0 (kafkajs' idempotent producer fails). Both serve ApiVersions v0-v2 only.
KAFKA_MOCK_LIBRDKAFKA="${OUTBOX_KAFKA_MOCK_LIBRDKAFKA:-bundled}"

build_kafka_mock() {
  [[ -f "$KAFKA_MOCK_SRC" ]] || die "kafka: missing $KAFKA_MOCK_SRC"
  case "$KAFKA_MOCK_LIBRDKAFKA" in
    system) build_kafka_mock_system ;;
    bundled) build_kafka_mock_bundled ;;
    *) die "kafka: OUTBOX_KAFKA_MOCK_LIBRDKAFKA must be 'bundled' (librdkafka 2.15.1 from @confluentinc/kafka-javascript) or 'system' (Debian's librdkafka-dev 2.0.2), got '$KAFKA_MOCK_LIBRDKAFKA'" ;;
  esac
}

build_kafka_mock_system() {
  KAFKA_BIN="$RUN_DIR/bin/kafka-mock"
  if [[ -x "$KAFKA_BIN" && "$KAFKA_BIN" -nt "$KAFKA_MOCK_SRC" ]]; then return 0; fi
  mkdir -p "$RUN_DIR/bin"
  log "compiling $KAFKA_BIN"
  local flags
  flags="$(pkg-config --cflags --libs rdkafka)" || die "kafka: pkg-config rdkafka failed (librdkafka-dev missing?)"
  # shellcheck disable=SC2086 # flags must split
  gcc -O2 -Wall -o "$KAFKA_BIN.tmp" "$KAFKA_MOCK_SRC" $flags -ldl || die "kafka: compiling $KAFKA_MOCK_SRC failed"
  mv -f "$KAFKA_BIN.tmp" "$KAFKA_BIN"
}

# The mock linked against the librdkafka of @confluentinc/kafka-javascript: its headers from the
# package's sources, its shared library from the addon build (scripts/services/kafka-javascript.sh).
# The executable and a copy of that library sit side by side and the executable's RUNPATH is
# $ORIGIN, so it never loads Debian's librdkafka.so.1. Cached per librdkafka version, source hash
# and architecture, like the addon.
build_kafka_mock_bundled() {
  # The package of the repository this script belongs to (links resolved), also when `up` runs from
  # another folder (docs/tutorial.md) or through a link to scripts/ (test/examples/prisma-page).
  local root
  root="$(cd "$(dirname "$(readlink -f "$KAFKA_MOCK_SRC")")/../.." && pwd)"
  local pkg="$root/node_modules/$CKJS_PACKAGE"
  local src="$pkg/deps/librdkafka/src" lib="$pkg/build/deps/librdkafka.so.1"
  [[ -f "$pkg/package.json" ]] || die "kafka: OUTBOX_KAFKA_MOCK_LIBRDKAFKA=bundled needs $CKJS_PACKAGE in $root/node_modules: run \"npm install\" in $root first (or OUTBOX_KAFKA_MOCK_LIBRDKAFKA=system for Debian's librdkafka 2.0.2)"
  [[ -f "$src/rdkafka_mock.h" ]] || die "kafka: $src/rdkafka_mock.h is missing ($CKJS_PACKAGE without its librdkafka sources?)"
  local version digest cache_root cache
  version="$(sed -n 's/^ *"librdkafka": *"\([^"]*\)".*/\1/p' "$pkg/package.json" | head -n1)"
  [[ -n "$version" ]] || die "kafka: no \"librdkafka\" version in $pkg/package.json"
  digest="$(sha256sum "$KAFKA_MOCK_SRC" | cut -c1-12)"
  cache_root="${OUTBOX_NATIVE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nest-outbox}"
  cache="$cache_root/kafka-mock-librdkafka-$version-$digest-$(uname -m)"
  KAFKA_BIN="$RUN_DIR/bin/librdkafka-$version/kafka-mock"
  if [[ ! -x "$cache/kafka-mock" ]]; then
    [[ -f "$lib" ]] || (cd "$root" && cmd_kafka_javascript) || die "kafka: building librdkafka $version (scripts/services.sh kafka-javascript) failed"
    [[ -f "$lib" ]] || die "kafka: $lib is missing after scripts/services.sh kafka-javascript"
    local t0 tmp
    t0="$(now)"
    log "kafka: compiling the mock against librdkafka $version"
    mkdir -p "$cache_root"
    tmp="$(mktemp -d "$cache_root/.kafka-mock.XXXXXX")"
    mkdir -p "$tmp/include/librdkafka"
    cp "$src/rdkafka.h" "$src/rdkafka_mock.h" "$tmp/include/librdkafka/"
    cp -L "$lib" "$tmp/librdkafka.so.1"
    # shellcheck disable=SC2016 # $ORIGIN is for the dynamic linker, not the shell
    gcc -O2 -Wall -I"$tmp/include" -o "$tmp/kafka-mock" "$KAFKA_MOCK_SRC" \
      "$tmp/librdkafka.so.1" -Wl,-rpath,'$ORIGIN' -Wl,--disable-new-dtags -ldl ||
      { rm -rf "$tmp"; die "kafka: compiling $KAFKA_MOCK_SRC against librdkafka $version failed"; }
    # Another clone may have cached the same build meanwhile: keep the first (a broken one goes).
    [[ -x "$cache/kafka-mock" ]] || rm -rf "$cache"
    mv -T "$tmp" "$cache" 2>/dev/null || rm -rf "$tmp"
    log "kafka: mock built in $(elapsed "$t0")s, cached in $cache"
  fi
  if [[ ! -x "$KAFKA_BIN" || "$cache/kafka-mock" -nt "$KAFKA_BIN" ]]; then
    mkdir -p "$(dirname "$KAFKA_BIN")"
    cp "$cache/librdkafka.so.1" "$(dirname "$KAFKA_BIN")/librdkafka.so.1"
    cp "$cache/kafka-mock" "$KAFKA_BIN.tmp" && mv -f "$KAFKA_BIN.tmp" "$KAFKA_BIN"
  fi
  # ldd's output read whole first: `ldd | grep -q` under pipefail fails when grep stops reading early (ldd gets SIGPIPE).
  local linked
  linked="$(ldd "$KAFKA_BIN")"
  [[ "$linked" == *"librdkafka.so.1 => $(dirname "$KAFKA_BIN")/librdkafka.so.1"* ]] ||
    die "kafka: $KAFKA_BIN does not load its own librdkafka.so.1: $(grep librdkafka <<<"$linked")"
}

up_kafka() {
  build_kafka_mock
  local i
  [[ "$KAFKA_PORT" =~ ^[0-9]+$ ]] || die "kafka: OUTBOX_KAFKA_PORT must be a port number, or 0 for a random one (got '$KAFKA_PORT')"
  if ((KAFKA_PORT > 0)); then
    for ((i = 0; i < KAFKA_BROKERS_COUNT; i++)); do ensure_port_free $((KAFKA_PORT + i)) kafka; done
  fi
  safe_rm_dir "$KAFKA_DIR"
  mkdir -p "$KAFKA_DIR"
  spawn "$KAFKA_LOG" "$KAFKA_BIN" "$KAFKA_BOOTSTRAP_FILE" "$KAFKA_PIDFILE" "$KAFKA_BROKERS_COUNT" "$KAFKA_PORT"
  local pid="$SPAWNED_PID"
  wait_until kafka "$KAFKA_LOG" "$TIMEOUT" kafka_ready "$pid"
}

# The running mock's executable and the librdkafka version it logged at start-up.
kafka_mock_binary() { readlink -f "/proc/$(pid_from_file "$KAFKA_PIDFILE")/exe" 2>/dev/null || echo "$KAFKA_BIN"; }
kafka_mock_librdkafka() { sed -n 's/.*kafka-mock\[[0-9]*\]: librdkafka \([^ ]*\) mock cluster.*/\1/p' "$KAFKA_LOG" 2>/dev/null | head -n1; }

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
