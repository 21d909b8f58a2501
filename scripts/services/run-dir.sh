# scripts/services.sh, run dir: sourced by services.sh, not run on its own.

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
