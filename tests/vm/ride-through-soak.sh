#!/usr/bin/env bash
# Why: CI runs the ride-through guest test (63) once per case, with a short
# partition and timeout, to keep the boot short. This runs the same test as
# a user would meet it: ten knfsd restarts under a trunked copy (nconnect=4,
# RDMA and TCP) at 0 to 40 MiB of it (the COMMIT at 32 MiB among them), and a
# 45 s silent partition under copies over RDMA and TCP at the client's
# default timeout (30 s). One VM boot, about 20-30 minutes on a 2-core host
# without KVM. Arguments go to run.sh (e.g. --build-dir DIR).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec bash "$here/run.sh" --test client-rdma-restart --test-timeout 2400 --timeout 2700 \
  --env RESTART_TRIES="${RESTART_TRIES:-10}" --env RESTART_AT_MIB="${RESTART_AT_MIB:-0,8,16,24,31,40}" \
  --env PARTITION_SECONDS="${PARTITION_SECONDS:-45}" \
  --env PARTITION_TIMEOUT_MS=default "$@"
