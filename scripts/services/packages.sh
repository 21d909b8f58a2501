# scripts/services.sh, package installation: sourced by services.sh, not run on its own.

APT_UPDATED=0
POLICY_RC=/usr/sbin/policy-rc.d
POLICY_RC_BACKUP=""
POLICY_RC_INSTALLED=0
# One install at a time on this machine, whichever clone runs it: policy-rc.d is machine-wide, and
# two installs each saving and restoring it would leave the other's window open or a stale one behind.
INSTALL_LOCK=/run/lock/outbox-services-packages.lock
# Every process the install starts inherits this variable (with a value of this run's own), which is
# how the processes it left behind are told from those of another suite that came up meanwhile.
INSTALL_MARK=OUTBOX_SERVICES_INSTALL_RUN

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

# pids_marked VALUE: the live processes whose environment carries INSTALL_MARK=VALUE (one grep over
# all of them: a loop with a few forks per process took most of a minute on a busy machine).
pids_marked() {
  local file pid
  while IFS= read -r file; do
    pid="${file#/proc/}"
    pid="${pid%/environ}"
    [[ "$pid" != "$$" && "$pid" != "$BASHPID" && "$(pid_state "$pid")" != Z ]] && printf '%s\n' "$pid"
  done < <(grep -lzx -- "$INSTALL_MARK=$1" /proc/[0-9]*/environ 2>/dev/null)
  return 0
}

# run_installer MARK PKG...: apt-get update (once) and install, or the stand-in command of
# OUTBOX_SERVICES_TEST_INSTALLER (the tests' way through this window without the package archive).
run_installer() {
  local mark="$1"
  shift
  if [[ -n "${OUTBOX_SERVICES_TEST_INSTALLER:-}" ]]; then
    log "installing $* with OUTBOX_SERVICES_TEST_INSTALLER ($OUTBOX_SERVICES_TEST_INSTALLER)"
    env "$INSTALL_MARK=$mark" bash -c "$OUTBOX_SERVICES_TEST_INSTALLER \"\$@\"" installer "$@" >&2 8>&- 9>&-
    return
  fi
  if ((!APT_UPDATED)); then
    log "apt-get update (missing: $*)"
    env "$INSTALL_MARK=$mark" apt-get -o DPkg::Lock::Timeout=300 update -qq >&2 8>&- 9>&- || die "apt-get update failed"
    APT_UPDATED=1
  fi
  log "installing $*"
  env "$INSTALL_MARK=$mark" DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    -o DPkg::Lock::Timeout=300 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
    "$@" >&2 8>&- 9>&-
}

# ensure_packages PKG...: apt-get install what is missing, with a policy-rc.d that forbids postinst
# scripts to start daemons. A process the install still left running (a postinst that starts its
# daemon by other means) is stopped by pid, so it cannot hold ports. Only those: the install's
# processes are known by the variable they inherit, never by their name or the time they appeared,
# for another clone's suite may start its own PostgreSQL or MariaDB on this machine meanwhile.
ensure_packages() {
  local missing=() p
  for p in "$@"; do
    if [[ -n "${OUTBOX_SERVICES_TEST_INSTALLER:-}" ]] || ! pkg_installed "$p"; then missing+=("$p"); fi
  done
  ((${#missing[@]})) || return 0
  [[ $EUID -eq 0 ]] || die "need root to install: ${missing[*]}"

  local t0 mark pid status=0
  t0="$(now)"
  exec 8>"$INSTALL_LOCK"
  flock -w 900 8 || die "another package install on this machine holds $INSTALL_LOCK (waited 900 s)"
  mark="$$.$(date +%s%N)"
  if [[ -e "$POLICY_RC" ]]; then
    POLICY_RC_BACKUP="$(mktemp /usr/sbin/.policy-rc.d.outbox.XXXXXX)"
    cp -p "$POLICY_RC" "$POLICY_RC_BACKUP"
  fi
  POLICY_RC_INSTALLED=1
  printf '#!/bin/sh\n# temporary, written by outbox scripts/services.sh\nexit 101\n' >"$POLICY_RC"
  chmod 755 "$POLICY_RC"

  run_installer "$mark" "${missing[@]}" || status=$?
  cleanup
  for pid in $(pids_marked "$mark"); do
    log "stopping $(cat "/proc/$pid/comm" 2>/dev/null) (pid $pid) started by the package install"
    kill_pid "$pid" "package daemon"
  done
  exec 8>&-
  ((status == 0)) || die "installing ${missing[*]} failed (exit status $status)"
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
