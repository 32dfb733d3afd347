# Sourced by the toolchain scripts: where built binaries and the pinned Node live, outside the repo.
# Keyed by version so a version bump builds fresh and an unchanged version is never rebuilt.
HOMEOSTAT_CACHE_DIR="${HOMEOSTAT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/homeostat}"
export HOMEOSTAT_CACHE_DIR
