# scripts/services.sh, rabbitmq: sourced by services.sh, not run on its own.

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
