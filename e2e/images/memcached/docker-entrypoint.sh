#!/bin/sh
# Arguments that start with a dash are memcached's flags: run memcached with them.
set -e
case "${1:-}" in
  -*) set -- memcached "$@" ;;
esac
exec "$@"
