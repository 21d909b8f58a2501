# scripts/services.sh, mariadb: sourced by services.sh, not run on its own.

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
