// The memcached exporter sidecar (ADR 0402): the standard library only, so it builds offline with
// the toolchain tools/build-binaries.sh already uses and needs no go.sum.
module github.com/homeostat/memcached-exporter

go 1.26.7
