# scripts/services.sh, process helpers: sourced by services.sh, not run on its own.

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

# The port is the local end of an open connection: an outgoing connection given it as its ephemeral
# port. A server cannot listen on it until that connection closes.
port_held_by_connection() {
  ss -Htn state established "sport = :$1" 2>/dev/null | grep -q .
}

# The OS's range of ephemeral ports ("32768 60999" on Linux by default).
ephemeral_range() { tr -s '\t ' ' ' </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null; }

ensure_port_free() {
  local port="$1" svc="$2"
  if port_busy "$port"; then
    die "$svc: port $port is already in use by $(port_owner "$port") - stop it or set the port override (see scripts/README.md)"
  fi
  if port_held_by_connection "$port"; then
    die "$svc: port $port is the local end of an open connection (an outgoing connection's ephemeral port; this machine hands out $(ephemeral_range)) - set the port override to one outside that range (see scripts/README.md)"
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
