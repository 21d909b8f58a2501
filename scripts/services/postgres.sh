# scripts/services.sh, postgres: sourced by services.sh, not run on its own.

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
  [[ "$PG_DB" =~ ^[a-z_][a-z0-9_]*$ ]] || die "postgres: OUTBOX_POSTGRES_DB must be a lower-case SQL name (got '$PG_DB')"
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
  # durability settings are left at their defaults (fsync=on, synchronous_commit=on).
  # wal_level=logical for every test: the WAL delivery mode streams through a replication slot, and
  # logical is a superset of replica, so the table mode runs on it unchanged (see scripts/README.md).
  # 40 slots and senders: parallel WAL tests each hold one of each.
  (cd / && pg_as "$bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/postgres.log" -w -t "$TIMEOUT" \
    -o "-p $PG_PORT -k $PG_DIR/sock -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=on -c wal_level=logical -c max_replication_slots=40 -c max_wal_senders=40" \
    start >/dev/null 9>&-) || { tail -n 20 "$PG_DIR/postgres.log" >&2; die "postgres did not start - see $PG_DIR/postgres.log"; }
  wait_until postgres "$PG_DIR/postgres.log" "$TIMEOUT" \
    "$bin/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -d postgres -U postgres
}

down_postgres() {
  postgres_running || return 0
  local bin
  bin="$(pg_bindir)"
  # OUTBOX_POSTGRES_STOP_MODE=immediate: a crash (no shutdown checkpoint), as the chaos suite's faults want.
  (cd / && pg_as "$bin/pg_ctl" -D "$PG_DIR/data" -m "${OUTBOX_POSTGRES_STOP_MODE:-fast}" -w -t 60 stop >/dev/null 2>&1) || true
  local pid
  if pid="$(pid_from_file "$PG_DIR/data/postmaster.pid")" && pid_alive "$pid" '^postgres$'; then
    kill_pid "$pid" postgres
  fi
}
