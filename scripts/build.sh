#!/usr/bin/env bash
# Configures and builds nfsrdma into build/ (or $NFSRDMA_BUILD_DIR) with
# warnings as errors. Extra arguments go to cmake's configure step.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${NFSRDMA_BUILD_DIR:-$root/build}
jobs=${NFSRDMA_JOBS:-$(nproc)}
cmake -S "$root" -B "$build" -G Ninja -DNFSRDMA_WERROR=ON "$@" >/dev/null
cmake --build "$build" -j "$jobs"
