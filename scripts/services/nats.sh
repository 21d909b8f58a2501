# scripts/services.sh, nats: sourced by services.sh, not run on its own.

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
