#!/usr/bin/env bash
# For users with Docker and internet: a kind cluster on kind's own node image, the operators and
# their samples running (npm start), then the e2e suites against it. It is the offline path
# (`npm run e2e -- --cluster kind`, e2e/kind/kind-cluster.ts) with one difference: the node image
# is kind's default instead of one built here, so the nodes pull the operand images themselves and
# only the operator images are built (operators/Dockerfile) and loaded.
# Usage: bash e2e/kind/up.sh [--workers N] [--no-tests]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
workers=3 tests=true
while (($# > 0)); do
  case "$1" in
    --workers) workers="$2" && shift ;;
    --no-tests) tests=false ;;
    *) echo "usage: bash e2e/kind/up.sh [--workers N] [--no-tests]" >&2 && exit 2 ;;
  esac
  shift
done
cd "$root"
export HOMEOSTAT_KIND_NODE_IMAGE=kind
npm run kind:up -- --workers "$workers" --node-image kind
# shellcheck source=tools/cache-dir.sh
source "$root/tools/cache-dir.sh"
kubeconfig="$HOMEOSTAT_CACHE_DIR/kind/homeostat-kind.kubeconfig"
# The operators and their samples, exactly as on the local cluster.
KUBECONFIG="$kubeconfig" npm start -- --current-kubeconfig
echo "kind cluster ready: export KUBECONFIG=$kubeconfig" >&2
if $tests; then npm run e2e -- --cluster kind --workers "$workers"; fi
