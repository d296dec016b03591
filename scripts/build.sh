#!/usr/bin/env bash
# Configures and builds nfsrdma into build/ (or $NFSRDMA_BUILD_DIR) with
# warnings as errors. Extra arguments go to cmake's configure step.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${NFSRDMA_BUILD_DIR:-$root/build}
jobs=${NFSRDMA_JOBS:-$(nproc)}
# ccache (when installed) makes rebuilds of unchanged files nearly free, also
# across clones: paths below the repository are hashed relative to it.
launcher=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$root" -B "$build" -G Ninja -DNFSRDMA_WERROR=ON "${launcher[@]}" "$@" >/dev/null
# NFSRDMA_BUILD_TARGETS: build only these targets (space-separated).
targets=()
for t in ${NFSRDMA_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j "$jobs" "${targets[@]}"
