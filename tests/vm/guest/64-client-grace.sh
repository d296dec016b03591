#!/bin/sh
# Why: a restarted server refuses OPEN, REMOVE and RENAME with NFS4ERR_GRACE
# for its grace period, so that earlier clients can reclaim their state. Our
# client must wait it out and say so on stderr (as the kernel client waits),
# and with a busy-timeout shorter than the grace period it must fail naming
# NFS4ERR_GRACE and change nothing. knfsd over RDMA is the real server.
# vm-timeout: 180
set -eu
. "$VM_LIB/vm.sh"
. "$VM_LIB/knfsd.sh"
command -v nfsrdma-client >/dev/null || vm_fail "nfsrdma-client is not in the overlay"
trap 'knfsd_stop' EXIT
trap 'exit 143' TERM INT
grace=30
# Taken before nfsd starts: the grace period ends no earlier than t0 + grace.
t0=$(date +%s)
KNFSD_KEEP_GRACE=1 KNFSD_GRACE_SECONDS=$grace knfsd_start
base="nfs://$SERVER_IP:20049$KNFSD_EXPORT"
q="?proto=rdma&bind=$CLIENT_IP&timeout=30000"
echo "placed by the server" >"$KNFSD_EXPORT/old"
head -c 1048583 /dev/urandom >src.bin
want=$(sha256sum <src.bin | cut -d' ' -f1)

# A budget shorter than the grace period: one clear error, the file stays.
if timeout 60 nfsrdma-client rm "$base/old$q&busy-timeout=500" 2>short.err; then
  vm_fail "rm succeeded in the grace period with busy-timeout=500 (was the grace period over already?)"
fi
cat short.err
grep -q "^nfsrdma-client: remove $KNFSD_EXPORT/old, sent [0-9]* times within busy-timeout=500 ms: NFS4ERR_GRACE (server in grace period)$" short.err ||
  vm_fail "the refused rm did not name the path, the budget and NFS4ERR_GRACE"
[ -e "$KNFSD_EXPORT/old" ] || vm_fail "the refused rm removed the file"
now=$(date +%s)
[ $((now - t0)) -lt $((grace - 5)) ] || vm_fail "too slow to start the waiting commands within the grace period ($((now - t0)) s of $grace)"

# The default budget: an OPEN (cp to a new file) and a REMOVE, both started
# in the grace period, wait for its end and then succeed.
timeout 120 nfsrdma-client cp src.bin "$base/new$q" 2>cp.err &
cp_pid=$!
timeout 120 nfsrdma-client rm "$base/old$q" 2>rm.err &
rm_pid=$!
cp_status=0; rm_status=0
wait "$cp_pid" || cp_status=$?
wait "$rm_pid" || rm_status=$?
waited=$(($(date +%s) - t0))
cat cp.err rm.err
[ "$cp_status" -eq 0 ] || vm_fail "cp in the grace period failed (exit $cp_status)"
[ "$rm_status" -eq 0 ] || vm_fail "rm in the grace period failed (exit $rm_status)"
grep -q "^nfsrdma-client: open $KNFSD_EXPORT/new: NFS4ERR_GRACE (server in grace period); sending it again for up to 120000 ms (busy-timeout)$" cp.err ||
  vm_fail "cp did not say that it waits for the grace period"
grep -q "^nfsrdma-client: remove $KNFSD_EXPORT/old: NFS4ERR_GRACE (server in grace period); sending it again" rm.err ||
  vm_fail "rm did not say that it waits for the grace period"
[ "$(wc -l <cp.err)" -eq 1 ] && [ "$(wc -l <rm.err)" -eq 1 ] || vm_fail "more than the one notice line on stderr"
got=$(sha256sum <"$KNFSD_EXPORT/new" | cut -d' ' -f1)
[ "$got" = "$want" ] || vm_fail "the copy made after the grace period has sha256 $got, expected $want"
[ ! -e "$KNFSD_EXPORT/old" ] || vm_fail "rm after the grace period left the file"
[ "$waited" -ge $((grace - 1)) ] || vm_fail "cp and rm were done after $waited s, before the $grace s grace period ended"
echo "grace: cp and rm waited for the $grace s grace period ($waited s after nfsd started) and succeeded"
