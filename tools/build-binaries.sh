#!/usr/bin/env bash
# Builds pinned Kubernetes, etcd, containerd, CoreDNS, local-path-provisioner, kube-router, helm, kubeconform,
# promtool, olm-validate, kind and versitygw binaries, and the benchmark's controller-runtime operator, from the Go module proxy
# into the version-keyed cache; and the Memcached metrics exporter from its sources in this repository.
# Usage: tools/build-binaries.sh [component[@minor]...]   (default: what the test suites need)
#        tools/build-binaries.sh --path <component[@minor]>   (prints where its binary is; builds nothing)
# Kubernetes components come from the newest minor pinned under tools/kubernetes/ (one wrapper
# module per minor), or from the minor HOMEOSTAT_KUBERNETES_VERSION names (1.35, oldest, newest);
# a suffix picks one for a single component: kube-apiserver@oldest, kubectl@1.35.
# etcd, etcdctl and etcdutl come from tools/etcd (the default minor) or, with a suffix, from the
# wrapper of that minor beside it: etcd@3.7 builds from tools/etcd/v3.7.
# A binary already in the cache is never rebuilt; delete its folder to force a rebuild.
# Go builds run under `nice -n 10`: they take both cores for minutes on a shared machine.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=tools/cache-dir.sh
source "$here/cache-dir.sh"

module_version() { # module_version <wrapper dir> <module path>
  awk -v m="$2" '$1 == m && $2 ~ /^v/ { print $2; exit } $1 == "require" && $2 == m { print $3; exit }' "$1/go.mod"
}

# The pinned Kubernetes minors, oldest first: the folders of tools/kubernetes that hold a go.mod.
mapfile -t kube_minors < <(for d in "$here"/kubernetes/1.*/; do
  [[ -f "$d/go.mod" ]] && basename "$d"
done | sort -V)
((${#kube_minors[@]} > 0)) || {
  echo "build-binaries: no Kubernetes wrapper module under tools/kubernetes/<minor>/" >&2
  exit 1
}
kube_minor() { # kube_minor <1.N | oldest | newest | empty>: the pinned minor it names
  case "${1:-newest}" in
    newest) echo "${kube_minors[-1]}" ;;
    oldest) echo "${kube_minors[0]}" ;;
    *)
      [[ -f "$here/kubernetes/$1/go.mod" ]] || {
        echo "build-binaries: Kubernetes $1 is not pinned (pinned: ${kube_minors[*]})" >&2
        return 2
      }
      echo "$1"
      ;;
  esac
}
default_minor="$(kube_minor "${HOMEOSTAT_KUBERNETES_VERSION:-}")"

containerd_version="$(module_version "$here/containerd" github.com/containerd/containerd/v2)"
coredns_version="$(module_version "$here/coredns" github.com/coredns/coredns)"
local_path_version="$(module_version "$here/local-path-provisioner" github.com/rancher/local-path-provisioner)"
kube_router_version="$(module_version "$here/kube-router" github.com/cloudnativelabs/kube-router/v2)"
helm_version="$(module_version "$here/helm" helm.sh/helm/v3)"
kubeconform_version="$(module_version "$here/helm" github.com/yannh/kubeconform)"
promtool_version="$(module_version "$here/prometheus" github.com/prometheus/prometheus)"
prometheus_operator_version="$(module_version "$here/prometheus-operator" github.com/prometheus-operator/prometheus-operator)"
kind_version="$(module_version "$here/kind" sigs.k8s.io/kind)"
cni_plugins_version="$(module_version "$here/cni-plugins" github.com/containernetworking/plugins)"
versitygw_version="$(module_version "$here/versitygw" github.com/versity/versitygw)"
bench_operator="$here/../bench/reconcile/controller-runtime"

sources_hash() { # sources_hash <dir>: the key of a module whose sources live in this repository
  # A module of the standard library only has no go.sum.
  local files=("$1/go.mod")
  if [[ -f "$1/go.sum" ]]; then files+=("$1/go.sum"); fi
  cat "${files[@]}" "$1"/*.go | sha256sum | cut -c1-12
}

resolve_component() { # resolve_component <component[@minor]>: sets component, wrapper, pkg, out, ldflags, tags, cgo
  component="${1%@*}" tags="" cgo=0
  local minor_choice=""
  [[ "$1" == *@* ]] && minor_choice="${1#*@}"
  case "$component${minor_choice:+@$minor_choice}" in
    kube-apiserver@* | kube-controller-manager@* | kube-scheduler@* | kubelet@* | kube-proxy@* | kubectl@* | kubeadm@* | \
      kube-apiserver | kube-controller-manager | kube-scheduler | kubelet | kube-proxy | kubectl | kubeadm)
      local minor kube_version
      minor="$(if [[ -n "$minor_choice" ]]; then kube_minor "$minor_choice"; else echo "$default_minor"; fi)"
      wrapper="$here/kubernetes/$minor"
      kube_version="$(module_version "$wrapper" k8s.io/kubernetes)"
      pkg="k8s.io/kubernetes/cmd/$component"
      out="$HOMEOSTAT_CACHE_DIR/bin/kubernetes-$kube_version"
      # The same version stamps upstream's build sets; without them the binaries report v0.0.0
      # (and kubeadm would ask for images of a version that does not exist).
      ldflags="-s -w"
      for v in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        ldflags+=" -X $v.gitVersion=$kube_version -X $v.gitMajor=1 -X $v.gitMinor=${minor#1.} -X $v.gitTreeState=clean"
      done
      tags="selinux,notest"
      ;;
    etcd@kind-node | coredns@kind-node) # the kind node image's control plane, at kubeadm's versions
      wrapper="$here/kind/node/$component"
      case "$component" in
        etcd) pkg="go.etcd.io/etcd/server/v3" ;;
        *) pkg="github.com/coredns/coredns" ;;
      esac
      out="$HOMEOSTAT_CACHE_DIR/bin/$component-$(module_version "$wrapper" "$pkg")"
      ldflags="-s -w"
      ;;
    etcd@* | etcdctl@* | etcdutl@* | etcd | etcdctl | etcdutl)
      wrapper="$here/etcd${minor_choice:+/v$minor_choice}"
      [[ -f "$wrapper/go.mod" ]] || {
        echo "build-binaries: etcd $minor_choice is not pinned (no $wrapper/go.mod)" >&2
        return 2
      }
      case "$component" in
        etcd) pkg="go.etcd.io/etcd/server/v3" ;;
        *) pkg="go.etcd.io/etcd/$component/v3" ;;
      esac
      out="$HOMEOSTAT_CACHE_DIR/bin/etcd-$(module_version "$wrapper" go.etcd.io/etcd/server/v3)"
      ldflags="-s -w"
      ;;
    containerd | containerd-shim-runc-v2 | ctr) # the local cluster's container runtime (e2e/cluster)
      wrapper="$here/containerd"
      pkg="github.com/containerd/containerd/v2/cmd/$component"
      out="$HOMEOSTAT_CACHE_DIR/bin/containerd-$containerd_version"
      ldflags="-s -w -X github.com/containerd/containerd/v2/version.Version=$containerd_version"
      # Upstream's tags: no CLI docs, and a shim without the gRPC server it does not use. No cgo
      # (upstream builds the shim without it too): what needs it (btrfs) is not used here.
      tags="urfave_cli_no_docs"
      if [[ "$component" == containerd-shim-runc-v2 ]]; then tags+=",no_grpc"; fi
      ;;
    coredns) # the local cluster's DNS (e2e/cluster)
      wrapper="$here/coredns"
      pkg="github.com/coredns/coredns"
      out="$HOMEOSTAT_CACHE_DIR/bin/coredns-$coredns_version"
      ldflags="-s -w"
      ;;
    local-path-provisioner) # the local cluster's default StorageClass (e2e/cluster)
      wrapper="$here/local-path-provisioner"
      pkg="github.com/rancher/local-path-provisioner"
      out="$HOMEOSTAT_CACHE_DIR/bin/local-path-provisioner-$local_path_version"
      ldflags="-s -w"
      ;;
    kube-router) # the local cluster's NetworkPolicy enforcement (e2e/cluster, ADR 0504)
      wrapper="$here/kube-router"
      pkg="github.com/cloudnativelabs/kube-router/v2/cmd/kube-router"
      out="$HOMEOSTAT_CACHE_DIR/bin/kube-router-$kube_router_version"
      # Upstream's Makefile stamps the version; without it kube-router logs an empty one.
      ldflags="-s -w -X github.com/cloudnativelabs/kube-router/v2/pkg/version.Version=$kube_router_version"
      ;;
    helm)
      wrapper="$here/helm"
      pkg="helm.sh/helm/v3/cmd/helm"
      out="$HOMEOSTAT_CACHE_DIR/bin/helm-$helm_version"
      # Upstream's Makefile stamps the version; without it `helm version` says v3.x-dev.
      ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$helm_version -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
      ;;
    kubeconform)
      wrapper="$here/helm"
      pkg="github.com/yannh/kubeconform/cmd/kubeconform"
      out="$HOMEOSTAT_CACHE_DIR/bin/kubeconform-$kubeconform_version"
      ldflags="-s -w -X main.version=$kubeconform_version"
      ;;
    promtool | prometheus) # promtool checks and unit-tests the charts' alerting rules; the server scrapes them in e2e
      wrapper="$here/prometheus"
      pkg="github.com/prometheus/prometheus/cmd/$component"
      out="$HOMEOSTAT_CACHE_DIR/bin/prometheus-$promtool_version"
      # The stamp upstream's promu sets; without it `--version` prints no version. The module's
      # v0.316.0 is the release 3.16.0.
      local release="${promtool_version#v0.}"
      ldflags="-s -w -X github.com/prometheus/common/version.Version=${release:0:1}.${release:1}"
      # The server finds its targets only through Kubernetes (the Prometheus Operator writes
      # kubernetes_sd_configs); upstream's tags leave the other service discoveries out.
      if [[ "$component" == prometheus ]]; then tags="remove_all_sd,enable_kubernetes_sd"; fi
      ;;
    prometheus-operator | prometheus-config-reloader) # the monitoring e2e suite's addon (ADR 0016)
      wrapper="$here/prometheus-operator"
      pkg="github.com/prometheus-operator/prometheus-operator/cmd/$component"
      if [[ "$component" == prometheus-operator ]]; then pkg="${pkg%/*}/operator"; fi
      out="$HOMEOSTAT_CACHE_DIR/bin/prometheus-operator-$prometheus_operator_version"
      # The stamp upstream's Makefile sets (the operator logs it and reports it as a metric).
      ldflags="-s -w -X github.com/prometheus/common/version.Version=${prometheus_operator_version#v}"
      ;;
    olm-validate) # runs operator-framework/api's validators on the OLM bundles; its main.go is ours, so it keys it too
      wrapper="$here/olm-validate"
      pkg="."
      out="$HOMEOSTAT_CACHE_DIR/bin/olm-validate-$(module_version "$wrapper" github.com/operator-framework/api)-$(sources_hash "$wrapper")"
      ldflags="-s -w"
      ;;
    host-local | loopback | ptp | portmap) # the kind node image's pod network (e2e/kind/node)
      wrapper="$here/cni-plugins"
      case "$component" in
        host-local) pkg="github.com/containernetworking/plugins/plugins/ipam/host-local" ;;
        portmap) pkg="github.com/containernetworking/plugins/plugins/meta/portmap" ;;
        *) pkg="github.com/containernetworking/plugins/plugins/main/$component" ;;
      esac
      out="$HOMEOSTAT_CACHE_DIR/bin/cni-plugins-$cni_plugins_version"
      ldflags="-s -w -X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=$cni_plugins_version"
      ;;
    kind)
      wrapper="$here/kind"
      pkg="sigs.k8s.io/kind"
      out="$HOMEOSTAT_CACHE_DIR/bin/kind-$kind_version"
      ldflags="-s -w"
      ;;
    versitygw) # a real S3-compatible server for the etcd operator's backup tests (posix backend)
      wrapper="$here/versitygw"
      pkg="github.com/versity/versitygw/cmd/versitygw"
      out="$HOMEOSTAT_CACHE_DIR/bin/versitygw-$versitygw_version"
      ldflags="-s -w -X main.Version=$versitygw_version"
      ;;
    bench-widget-operator) # bench:reconcile's controller-runtime side; its sources are ours, so they key it too
      wrapper="$bench_operator"
      pkg="."
      out="$HOMEOSTAT_CACHE_DIR/bin/bench-widget-operator-$(module_version "$wrapper" sigs.k8s.io/controller-runtime)-$(sources_hash "$wrapper")"
      ldflags="-s -w"
      ;;
    memcached-exporter) # the Memcached pods' metrics sidecar (ADR 0402); its sources are ours, so they key it
      wrapper="$here/../operators/memcached/exporter"
      pkg="."
      out="$HOMEOSTAT_CACHE_DIR/bin/memcached-exporter-$(sources_hash "$wrapper")"
      ldflags="-s -w"
      ;;
    *)
      echo "build-binaries: unknown component '$component'" >&2
      return 2
      ;;
  esac
}

cached_path() { # cached_path <component>: where its binary is (or will be) in the cache
  resolve_component "$1"
  echo "$out/$component"
}

build_one() { # build_one <component>
  resolve_component "$1"
  if [[ -x "$out/$component" ]]; then
    return 0
  fi
  mkdir -p "$out"
  echo "build-binaries: building $component ($pkg, ${out##*/})${progress:+, $progress}; a cold build takes minutes" >&2
  local started=$SECONDS
  (cd "$wrapper" && CGO_ENABLED=$cgo GOFLAGS=-mod=readonly nice -n 10 go build -trimpath ${tags:+-tags "$tags"} \
    -ldflags "$ldflags" -o "$out/$component.partial" "$pkg")
  mv "$out/$component.partial" "$out/$component"
  if [[ "$component" == prometheus-operator ]]; then
    # Its CRDs come with the binary, from the same module version in Go's module cache (the
    # addon applies them from here); never copied into the repository by hand.
    local module_dir
    module_dir="$(cd "$wrapper" && go list -m -f '{{.Dir}}' github.com/prometheus-operator/prometheus-operator)"
    rm -rf "$out/crds.partial" && mkdir -p "$out/crds.partial"
    cp "$module_dir"/example/prometheus-operator-crd/*.yaml "$out/crds.partial/"
    chmod -R u+w "$out/crds.partial" && rm -rf "$out/crds" && mv "$out/crds.partial" "$out/crds"
  fi
  if [[ "$component" == bench-widget-operator || "$component" == olm-validate || "$component" == memcached-exporter ]]; then
    # Keyed by its sources, it would otherwise leave one stale build per edit.
    find "${out%/*}" -maxdepth 1 -name "$component-*" ! -path "$out" -exec rm -rf {} +
  fi
  echo "build-binaries: $component ready in $((SECONDS - started)) s -> $out/$component" >&2
}

if [[ "${1:-}" == --path ]]; then
  cached_path "${2:?usage: build-binaries.sh --path <component>}"
  exit 0
fi

components=("$@")
if ((${#components[@]} == 0)); then
  # npm test: the control-plane tests on the newest minor, the library's also on the oldest.
  components=(kube-apiserver kubectl kube-apiserver@oldest etcd etcdctl etcdutl)
  # The etcd operator's upgrade tests run members of every pinned etcd minor.
  for d in "$here"/etcd/v*/; do
    if [[ -f "$d/go.mod" ]]; then components+=("etcd@$(basename "$d" | cut -c2-)"); fi
  done
fi

mkdir -p "$HOMEOSTAT_CACHE_DIR"
# Two runs at once (a test run and a developer's shell) must not build into the same file.
exec 9>"$HOMEOSTAT_CACHE_DIR/.build.lock"
flock 9
# "n of m" counts only what is missing, so the line says how far along a cold build is.
# Two names for one binary (kube-apiserver and kube-apiserver@oldest when one minor is pinned)
# count once.
missing=()
for c in "${components[@]}"; do
  path="$(cached_path "$c")"
  [[ -x "$path" || " ${missing[*]} " == *" $path "* ]] || missing+=("$path")
done
built=0
for c in "${components[@]}"; do
  progress=""
  path="$(cached_path "$c")"
  if [[ " ${missing[*]} " == *" $path "* && ! -x "$path" ]]; then
    built=$((built + 1))
    progress="$built of ${#missing[@]} to build"
  fi
  build_one "$c"
done
