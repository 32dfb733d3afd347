#!/usr/bin/env bash
# Installs the Debian packages a job needs when their commands are missing (as root, with apt-get);
# otherwise says which package to install. Usage: tools/require-packages.sh <set>...
#   base     every job: Go (the pinned binaries build from the Go module proxy), openssl, util-linux
#   test     npm test: shellcheck (lints the PostgreSQL entrypoint), PostgreSQL 15 (its tests run it),
#            pgBackRest (the PostgreSQL backup engine's tests run it), iproute2, iptables, nftables and
#            ipset (the local cluster's cleanup is tested in a network namespace), memcached (the scaling
#            benchmark's tests run it), sasl2-bin and libsasl2-modules (the Memcached operator's
#            SASL tests build a database with saslpasswd2 and authenticate with PLAIN)
#   bench-backup  bench/postgres/backup-tools.bench.ts: pgBackRest and Barman Cloud side by side
#   bench-memcached  bench/memcached/scaling.bench.ts: memcached
#   cluster  the local cluster: iproute2, iptables, nftables (the egress guard), ipset (kube-router's
#            policies), conntrack, runc, CNI plugins (containerd 2 is built from the Go module proxy:
#            Debian's 1.6 is too old for kubelet >= 1.36)
#   images   offline image builds: debootstrap, Docker
#   kind     the offline kind cluster (e2e/kind): Docker, runc, jq
# Jobs on a cluster of their own (npm start --current-kubeconfig, e2e with KUBECONFIG) need only base.
set -euo pipefail

say() { echo "packages: $*" >&2; }

# An absolute path only has to exist (a plugin library is not executable); a command must be on PATH.
present() { if [[ $1 == /* ]]; then [[ -e $1 ]]; else command -v "$1" >/dev/null 2>&1; fi; }

require_command() { # require_command <command or absolute path> <debian package>
  present "$1" && return 0
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    say "installing $2 from Debian's packages"
    # One apt run at a time: parallel jobs would fight over dpkg's lock.
    (
      flock 7
      present "$1" && exit 0
      apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
    ) 7>"${TMPDIR:-/tmp}/homeostat-apt.lock"
  else
    say "'$1' is missing: install the '$2' package" && exit 1
  fi
}

for set in "$@"; do
  case "$set" in
    base)
      require_command go golang-go
      require_command openssl openssl
      require_command setpriv util-linux
      require_command flock util-linux
      ;;
    test)
      require_command shellcheck shellcheck
      require_command /usr/lib/postgresql/15/bin/postgres postgresql
      require_command pgbackrest pgbackrest
      require_command ip iproute2
      require_command iptables iptables
      require_command nft nftables
      require_command ipset ipset
      require_command memcached memcached
      require_command saslpasswd2 sasl2-bin
      require_command "/usr/lib/$(uname -m)-linux-gnu/sasl2/libplain.so" libsasl2-modules
      ;;
    bench-memcached)
      require_command memcached memcached
      ;;
    bench-backup)
      require_command /usr/lib/postgresql/15/bin/postgres postgresql
      require_command pgbackrest pgbackrest
      require_command barman-cloud-backup barman-cli-cloud
      ;;
    cluster)
      require_command ip iproute2
      require_command iptables iptables
      require_command nft nftables
      require_command ipset ipset
      require_command conntrack conntrack
      require_command runc runc
      require_command /usr/lib/cni/bridge containernetworking-plugins
      ;;
    images)
      require_command debootstrap debootstrap
      require_command dockerd docker.io
      ;;
    kind) # the offline kind cluster: its own dockerd, whose runtime wrapper edits runc's config with jq
      require_command dockerd docker.io
      require_command runc runc
      require_command jq jq
      ;;
    *)
      say "unknown set '$set' (base, test, bench-backup, bench-memcached, cluster, images, kind)" && exit 2
      ;;
  esac
done
