#!/usr/bin/env bash
# Writes the wrapper module that pins one Kubernetes release: tools/kubernetes/<minor>/go.mod and
# go.sum, e.g. `bash tools/kubernetes/pin.sh v1.37.2` writes tools/kubernetes/1.37/. A patch bump
# is the same command with the new version; a new minor gets a new folder (and an old one is
# removed with `git rm -r`). The folders ARE the supported versions: the newest runs the local
# cluster and every control-plane test, the oldest runs the library's control-plane tests too
# (see tools/kubernetes/README.md).
#
# k8s.io/kubernetes requires its staging modules (k8s.io/api, k8s.io/client-go, ...) at v0.0.0 and
# points them at ./staging with replace lines, which a dependant does not inherit. The wrapper
# supplies a replace line per staging module with the published v0.<minor>.<patch>, taken from
# the release's own go.mod, and copies its go and godebug lines so the build behaves as upstream's.
set -euo pipefail
version="${1:?usage: tools/kubernetes/pin.sh v1.MINOR.PATCH}"
[[ "$version" =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || {
  echo "pin: '$version' is not a release version like v1.37.2" >&2
  exit 2
}
minor="${BASH_REMATCH[1]}" patch="${BASH_REMATCH[2]}"
staging_version="v0.$minor.$patch"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="$here/1.$minor"

upstream_mod="$(cd "$here" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$version" |
  sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
[[ -f "$upstream_mod" ]] || {
  echo "pin: the Go module proxy has no k8s.io/kubernetes@$version" >&2
  exit 1
}
go_line="$(grep -m1 '^go ' "$upstream_mod")"
godebug_line="$(grep -m1 '^godebug ' "$upstream_mod" || true)"
# The left-hand side of every `k8s.io/x => ./staging/src/k8s.io/x` line.
mapfile -t staging < <(awk '/=> \.\/staging\// { print ($1 == "replace" ? $2 : $1) }' "$upstream_mod")
((${#staging[@]} > 0)) || {
  echo "pin: no staging replace lines in $upstream_mod" >&2
  exit 1
}

mkdir -p "$dir"
{
  echo "// Wrapper module pinning Kubernetes $version (written by tools/kubernetes/pin.sh; rerun it to change)."
  echo "// k8s.io/kubernetes pins its staging modules to v0.0.0 with local replace lines, which a"
  echo "// dependant does not inherit, so this module supplies the matching published versions."
  echo "module github.com/homeostat/tools/kubernetes-1.$minor"
  echo
  echo "$go_line"
  [[ -n "$godebug_line" ]] && echo && echo "$godebug_line"
  echo
  echo "tool ("
  for cmd in kube-apiserver kube-controller-manager kube-proxy kube-scheduler kubeadm kubectl kubelet; do
    echo "	k8s.io/kubernetes/cmd/$cmd"
  done
  echo ")"
  echo
  echo "require k8s.io/kubernetes $version"
  echo
  echo "replace ("
  for module in "${staging[@]}"; do
    echo "	$module => $module $staging_version"
  done
  echo ")"
} >"$dir/go.mod"
rm -f "$dir/go.sum"
(cd "$dir" && GOFLAGS=-mod=mod go mod tidy)
echo "pin: tools/kubernetes/1.$minor pins Kubernetes $version (${#staging[@]} staging modules at $staging_version)" >&2
