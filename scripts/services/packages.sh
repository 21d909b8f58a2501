# scripts/services.sh, package installation: sourced by services.sh, not run on its own.

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
