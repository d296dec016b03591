#!/usr/bin/env bash
# The cost of coordinating many clients, measured: N MPI ranks of one job
# each against one process of N jobs (its anchor), same server, same run.
# One nfs-ganesha (`nfsrdma-server serve`, on 127.0.0.1, exporting a fresh
# directory) serves both; the two alternate for a few rounds so that a
# noisy machine hurts both alike, and the best round of each is compared
# (as perftest and fio users take a peak). Prints both IOPS and the ratio;
# exits 1 when the ranks reach less than 0.9x (issue 22's bar).
#   bench/cluster/bench-ranks-vs-jobs.sh [BUILD_DIR] [RANKS] [ROUNDS]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build}
ranks=${2:-3}
rounds=${3:-3}
bench=$build/bin/nfsrdma-bench
server=$build/bin/nfsrdma-server
work=$(mktemp -d /var/tmp/nfsrdma-ranks-bench.XXXXXX)
mkdir -p "$work/export"
# shellcheck source=scripts/lib/serve-loopback.sh
. "$root/scripts/lib/serve-loopback.sh"
trap 'kill ${SERVE_PID:-} 2>/dev/null; wait ${SERVE_PID:-} 2>/dev/null; rm -rf "$work"' EXIT
serve_loopback "$server" "$work/export" "$work"
port=$SERVE_PORT
target="nfs:nfs://127.0.0.1:$port/export"
common=(--profile 4k-randread --iodepth 32 --size 64m --runtime 5 --ramp 1 --target "$target" --json -)
mpirun=(mpirun --allow-run-as-root --oversubscribe --bind-to none --mca pml ob1
        --mca btl self,vader --mca btl_vader_single_copy_mechanism none -np "$ranks")
iops() { sed -n 's/.*"read": {[^}]*"iops": \([0-9.e+]*\).*/\1/p' | head -1; }
best_jobs=0 best_ranks=0
for round in $(seq 1 "$rounds"); do
  # The same file set: the ranks' files are jobs 0..N-1 as the N jobs' are.
  j=$("$bench" file "${common[@]}" --numjobs "$ranks" | iops)
  r=$("${mpirun[@]}" "$bench" file "${common[@]}" --numjobs 1 | iops)
  printf 'round %d: one process, %d jobs: %.0f IOPS; %d ranks x 1 job: %.0f IOPS\n' \
    "$round" "$ranks" "$j" "$ranks" "$r"
  best_jobs=$(awk -v a="$best_jobs" -v b="$j" 'BEGIN{print (b>a)?b:a}')
  best_ranks=$(awk -v a="$best_ranks" -v b="$r" 'BEGIN{print (b>a)?b:a}')
done
ratio=$(awk -v a="$best_ranks" -v b="$best_jobs" 'BEGIN{printf "%.2f", a/b}')
printf '4k-randread QD32, same ganesha, best of %d: %d ranks %.0f IOPS, one process with %d jobs %.0f IOPS (anchor): %sx (goal >= 0.90x)\n' \
  "$rounds" "$ranks" "$best_ranks" "$ranks" "$best_jobs" "$ratio"
awk -v r="$ratio" 'BEGIN{exit !(r >= 0.9)}'
