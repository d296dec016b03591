#!/bin/sh
# Why: many clients over RDMA: two MPI ranks (OpenMPI's orterun, the guest's
# only MPI launcher) of nfsrdma-bench against knfsd's svcrdma, in one boot.
# Rank 0 prints the aggregate and a row per rank; --verify must be clean on
# both ranks. The ranks talk over shared memory (vader), never the rxe
# device: OpenMPI's UCX and openib would otherwise try it.
# vm-timeout: 300
set -eu
. "$VM_LIB/vm.sh"
. "$VM_LIB/knfsd.sh"
command -v nfsrdma-bench >/dev/null || vm_skip "nfsrdma-bench is not in the build dir (not built)"
command -v orterun >/dev/null || vm_skip "no orterun in the guest image (openmpi-bin)"
trap 'knfsd_stop' EXIT
trap 'exit 143' TERM INT
knfsd_start
url="nfs://$SERVER_IP:20049$KNFSD_EXPORT?proto=rdma&bind=$CLIENT_IP&timeout=30000"
# The guest boots with no host name ("(none)"), which orterun refuses as a node name.
[ "$(cat /proc/sys/kernel/hostname)" = "(none)" ] && echo nfsrdma-guest >/proc/sys/kernel/hostname
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The guest has no ssh: every rank is local, so the remote agent is never
# started, but orterun refuses to start without one it can find.
rc=0
timeout 240 orterun --oversubscribe --bind-to none --mca plm_rsh_agent false --mca pml ob1 \
  --mca btl self,vader --mca btl_vader_single_copy_mechanism none -np 2 \
  nfsrdma-bench file --target "nfs:$url" --profile 4k-randwrite --iodepth 16 --size 4m \
  --runtime 3 --ramp 0.5 --verify >ranks.txt 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat ranks.txt; vm_fail "two ranks over RDMA exited $rc"; }
cat ranks.txt
grep -q ' clients: 2 MPI ranks' ranks.txt || vm_fail "rank 0 does not report 2 MPI ranks"
grep -q '^ aggregate ' ranks.txt || vm_fail "no aggregate line"
[ "$(grep -cE '^ +[01]  ' ranks.txt)" -eq 2 ] || vm_fail "not one row per rank"
grep -q ' 0 mismatches' ranks.txt || vm_fail "rank 0's read-back did not verify"
# Each rank's errors column (its verify mismatches and I/O errors) is 0.
[ "$(grep -cE '^ +[01]  .* 0$' ranks.txt)" -eq 2 ] || vm_fail "a rank reported errors"
if grep -qiE 'warning|mca_base_component' ranks.txt; then vm_fail "MPI printed warnings"; fi
echo "two MPI ranks over RDMA against knfsd: aggregate present, verify clean"
