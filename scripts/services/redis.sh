# scripts/services.sh, redis: sourced by services.sh, not run on its own.

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
