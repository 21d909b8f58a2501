# scripts/services.sh kafka-javascript: sourced by services.sh, not run on its own.
#
# @confluentinc/kafka-javascript (ConfluentKafkaTransport's optional peer) is a native addon with
# librdkafka inside. Its install script downloads a prebuilt binary, which fails without internet
# access, so package.json's allowScripts keeps npm from running it. This builds the addon from the
# librdkafka sources the package ships, linked against Debian's OpenSSL and zlib (CKJS_LINKING=dynamic;
# the default static build downloads those sources and fails offline), for the Node on PATH and its
# headers, about 2.5 minutes on 2 cores. The result is cached per package version, Node ABI and
# architecture under $OUTBOX_NATIVE_CACHE (default ~/.cache/nest-outbox), so a fresh clone or a new
# `npm install` on the same machine copies it back in a second.

CKJS_PACKAGE='@confluentinc/kafka-javascript'
CKJS_ADDON='build/Release/confluent-kafka-javascript.node'
# The addon finds its librdkafka through its RUNPATH, $ORIGIN/../deps.
CKJS_LIBS=(build/deps/librdkafka.so.1 build/deps/librdkafka++.so.1)

ckjs_loads() { node -e "require('$CKJS_PACKAGE')" >/dev/null 2>&1; }

# The headers of the Node on PATH: npm_config_nodedir first (CI sets it with another Node), then
# npm's own nodedir setting, then the Node installation itself. Headers of another major would
# build an addon that this Node refuses to load.
ckjs_nodedir() {
  local major="$1" dir found
  local candidates=("${npm_config_nodedir:-}" "$(npm config get nodedir 2>/dev/null || true)" "$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")")
  for dir in "${candidates[@]}"; do
    [[ -n "$dir" && "$dir" != undefined && "$dir" != null && -f "$dir/include/node/node_version.h" ]] || continue
    found="$(awk '$2 == "NODE_MAJOR_VERSION" { print $3 }' "$dir/include/node/node_version.h")"
    if [[ "$found" == "$major" ]]; then
      printf '%s\n' "$dir"
      return 0
    fi
    log "kafka-javascript: $dir has the headers of Node $found, not $major: not used"
  done
  return 1
}

ckjs_node_gyp() {
  if [[ -n "${npm_config_node_gyp:-}" && -f "${npm_config_node_gyp}" ]]; then
    printf '%s\n' "$npm_config_node_gyp"
    return 0
  fi
  local bundled
  bundled="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
  [[ -f "$bundled" ]] || return 1
  readlink -f "$bundled"
}

cmd_kafka_javascript() {
  local pkg="$PWD/node_modules/$CKJS_PACKAGE"
  [[ -f "$pkg/package.json" ]] || die "kafka-javascript: $pkg is missing: run \"npm install\" first"
  local version abi major cache lib t0
  version="$(node -p "require('$pkg/package.json').version")"
  abi="$(node -p 'process.versions.modules')"
  major="$(node -p 'process.versions.node.split(".")[0]')"
  if ckjs_loads; then
    log "kafka-javascript: $CKJS_PACKAGE $version loads on Node $(node --version)"
    return 0
  fi
  local cache_root="${OUTBOX_NATIVE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nest-outbox}"
  cache="$cache_root/kafka-javascript-$version-node$abi-$(uname -m)"
  mkdir -p "$cache_root"
  # One build at a time per machine (two clones testing side by side would build twice).
  exec 8>"$cache_root/.kafka-javascript.lock"
  flock -w 900 8 || die "kafka-javascript: another build holds $cache_root/.kafka-javascript.lock"

  if [[ ! -f "$cache/$CKJS_ADDON" ]]; then
    ensure_packages g++ make python3 pkg-config libssl-dev zlib1g-dev
    local nodedir node_gyp build_log="$cache_root/kafka-javascript-build.log"
    nodedir="$(ckjs_nodedir "$major")" ||
      die "kafka-javascript: no headers of Node $major found (tried npm_config_nodedir, npm's nodedir, the Node installation); set npm_config_nodedir to a directory with include/node of Node $major"
    node_gyp="$(ckjs_node_gyp)" || die "kafka-javascript: node-gyp not found (set npm_config_node_gyp, or use an npm that bundles it)"
    log "kafka-javascript: building $CKJS_PACKAGE $version (librdkafka from its sources) for Node $(node --version) with the headers in $nodedir, about 2.5 minutes (log: $build_log)"
    t0="$(now)"
    # No -j: node-gyp's parallel make races librdkafka's configure step; librdkafka's make runs in parallel itself.
    if ! (cd "$pkg" && CKJS_LINKING=dynamic node "$node_gyp" rebuild --nodedir="$nodedir") >"$build_log" 2>&1 9>&- 8>&-; then
      tail -n 30 "$build_log" >&2
      die "kafka-javascript: the build failed (whole log: $build_log)"
    fi
    rm -rf "$cache.tmp"
    mkdir -p "$cache.tmp/build/Release" "$cache.tmp/build/deps"
    cp "$pkg/$CKJS_ADDON" "$cache.tmp/$CKJS_ADDON"
    for lib in "${CKJS_LIBS[@]}"; do cp -L "$pkg/$lib" "$cache.tmp/$lib"; done
    rm -rf "$cache" && mv "$cache.tmp" "$cache"
    log "kafka-javascript: built in $(elapsed "$t0")s, cached in $cache"
  else
    mkdir -p "$pkg/build/Release" "$pkg/build/deps"
    cp "$cache/$CKJS_ADDON" "$pkg/$CKJS_ADDON"
    for lib in "${CKJS_LIBS[@]}"; do cp "$cache/$lib" "$pkg/$lib"; done
    log "kafka-javascript: addon copied from $cache"
  fi
  exec 8>&-
  ckjs_loads || die "kafka-javascript: $CKJS_PACKAGE still does not load: $(node -e "require('$CKJS_PACKAGE')" 2>&1 | grep -m1 -i error)"
  log "kafka-javascript: $CKJS_PACKAGE $version loads on Node $(node --version)"
}
