#!/usr/bin/env bash
# Why: issue 40's benchmark of tune against the exhaustive grid and the
# field's rules of thumb, in one VM boot (guest test 73-tune-grid, which CI
# skips): for 4k-randread QD32 and 1 MiB sequential reads over RDMA on a
# detuned knfsd, the grid's trials and best figure, tune's trials and best,
# and tune's recommendation against both in alternated runs. About 60-80
# minutes on a 2-core host without KVM. Arguments go to run.sh (e.g.
# --build-dir DIR; --env TUNE_GRID_WORKLOADS=1m-read for one workload).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec bash "$here/run.sh" --test tune-grid --test-timeout 5400 --timeout 6000 --env TUNE_GRID=1 "$@"
