#!/usr/bin/env bash
# For users with Docker and internet: a kind cluster with the operators installed and their
# samples running (npm start), then the e2e suites against it. Usage: bash e2e/kind/up.sh [--no-tests]
# Operand images (memcached, etcd, postgres) are pulled by the nodes from their registries; only
# the operator images are built here (each listed in e2e/images/images.json, from operators/Dockerfile)
# and loaded into the nodes.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bash "$root/tools/build-binaries.sh" kind
source "$root/tools/cache-dir.sh"
bin() { ls -d "$HOMEOSTAT_CACHE_DIR"/bin/"$1"-*/"$1" | tail -1; }
kind="$(bin kind)"
cluster=homeostat
export KUBECONFIG="${KUBECONFIG_KIND:-$HOME/.kube/homeostat-kind}"

if ! "$kind" get clusters | grep -qx "$cluster"; then
  "$kind" create cluster --config "$here/kind-cluster.yaml" --kubeconfig "$KUBECONFIG" --wait 120s
fi
# Each operator's image under the chart's default name (e2e/images/images.json), so the charts install unchanged.
while read -r operator image; do
  docker build -t "$image" -f "$root/operators/Dockerfile" --build-arg "OPERATOR=$operator" "$root"
  "$kind" load docker-image --name "$cluster" "$image"
done < <(node -e "for (const [o, i] of Object.entries(require('$root/e2e/images/images.json').operators)) console.log(o, i)")
# The operators and their samples, exactly as on the local cluster.
(cd "$root" && KUBECONFIG="$KUBECONFIG" npm start -- --current-kubeconfig)
echo "kind cluster ready: export KUBECONFIG=$KUBECONFIG" >&2
[[ "${1:-}" == "--no-tests" ]] || (cd "$root" && KUBECONFIG="$KUBECONFIG" npm run e2e)
