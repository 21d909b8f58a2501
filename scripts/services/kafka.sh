# scripts/services.sh, kafka (librdkafka mock cluster): sourced by services.sh, not run on its own.

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
  gcc -O2 -Wall -o "$KAFKA_BIN.tmp" "$KAFKA_MOCK_SRC" $flags -ldl || die "kafka: compiling $KAFKA_MOCK_SRC failed"
  mv -f "$KAFKA_BIN.tmp" "$KAFKA_BIN"
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
