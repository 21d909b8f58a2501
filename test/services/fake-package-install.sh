#!/usr/bin/env bash
# Stands in for apt-get in scripts/services.sh's install window (OUTBOX_SERVICES_TEST_INSTALLER), for
# services-side-by-side.e2e-spec.ts: it leaves a "daemon" behind as a postinst might (a sleep named
# nats-server), tells the test the window is open, and holds the window open until the test releases it.
set -euo pipefail
dir="${FAKE_INSTALL_DIR:?FAKE_INSTALL_DIR: the directory the test gives this installer}"
ln -sf "$(command -v sleep)" "$dir/nats-server"
setsid "$dir/nats-server" 600 </dev/null >/dev/null 2>&1 &
echo "$!" >"$dir/daemon.pid"
touch "$dir/window-open"
for _ in $(seq 1 1200); do
  if [[ -e "$dir/release" ]]; then exit 0; fi
  sleep 0.1
done
echo "fake package install: the test never released the window (120 s)" >&2
exit 1
