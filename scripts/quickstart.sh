#!/usr/bin/env bash
# Quick start: installs everything, builds, and runs the main job on its
# embedded default (an nfs-ganesha server on loopback exporting a temporary
# directory). Arguments are passed to nfsrdma-bench.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/install-deps.sh"
NFSRDMA_BUILD_DIR=$root/build bash "$root/scripts/build.sh" -DCMAKE_BUILD_TYPE=RelWithDebInfo
exec "$root/build/bin/nfsrdma-bench" "${@:-compare}"
