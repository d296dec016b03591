#!/bin/sh
# Why: a server restart under a running benchmark (rpc.nfsd 0, started again
# a second later) must be ridden through by our RDMA client with every block
# verified, and the same restart under the kernel client's fio, in the same
# boot, shows what the kernel does for comparison. Both must complete; ours
# prints the account (seconds without service, calls resent, bytes written
# again), the kernel's is read off fio's worst latency and mountstats.
# vm-timeout: 300
set -eu
. "$VM_LIB/vm.sh"
. "$VM_LIB/knfsd.sh"
command -v nfsrdma-bench >/dev/null || vm_fail "nfsrdma-bench is not in the overlay"
command -v fio >/dev/null || vm_fail "fio is not in the guest"
mnt=/mnt/kernel-restart
trap 'umount -f "$mnt" 2>/dev/null || true; knfsd_stop' EXIT
trap 'exit 143' TERM INT
knfsd_start

restart_server() {
  rpc.nfsd 0 || vm_fail "rpc.nfsd 0"
  sleep 1
  rpc.nfsd -N 3 -U -G 10 -L 10 --rdma=20049 8 || vm_fail "restarting rpc.nfsd"
  grep -q '^rdma 20049$' /proc/fs/nfsd/portlist || echo 'rdma 20049' >/proc/fs/nfsd/portlist
}

# Ours: a verified random-read run over RDMA with a restart 8 s in.
url="nfs://$SERVER_IP:20049$KNFSD_EXPORT?proto=rdma&bind=$CLIENT_IP&timeout=20000"
timeout 200 nfsrdma-bench file --target "nfs:$url" --profile 4k-randread --size 32m --runtime 30 --ramp 0 \
  --iodepth 16 --verify --json ours.json >ours.out 2>ours.err &
pid=$!
vm_wait 60 "the benchmark's file set" sh -c "ls $KNFSD_EXPORT/nfsrdma-bench.* >/dev/null 2>&1" || true
sleep 8
restart_server
status=0
wait "$pid" || status=$?
cat ours.out ours.err
[ "$status" -eq 0 ] || vm_fail "nfsrdma-bench did not ride through the restart (exit $status)"
grep -q ', 0 mismatches' ours.out || vm_fail "the verified run across the restart found mismatches"
grep -q 'outage: ' ours.out || vm_fail "the run did not report the outage it crossed"

# The kernel's: fio on a proto=rdma mount of the same export, the same restart.
knfsd_mount "$mnt"
timeout 200 fio --name=krestart --filename="$mnt/fio.dat" --size=32m --rw=randread --bs=4k --iodepth=16 \
  --ioengine=libaio --direct=1 --time_based --runtime=30 --minimal >kernel.fio 2>kernel.err &
pid=$!
sleep 10
restart_server
status=0
wait "$pid" || status=$?
[ "$status" -eq 0 ] || { cat kernel.fio kernel.err; vm_fail "the kernel client's fio failed across the restart (exit $status)"; }
# terse v3: field 5 is the error, 15 the worst read completion latency (usec).
err=$(cut -d';' -f5 kernel.fio)
worst=$(cut -d';' -f15 kernel.fio)
[ "$err" = 0 ] || vm_fail "fio reported error $err across the restart"
# mountstats: the xprt line's connect count (fourth number after "rdma")
# and READ's ops and transmissions (the difference was resent).
connects=$(awk -v m="$mnt" '$1 == "device" { on = ($5 == m) } on && $1 == "xprt:" { print $5; exit }' /proc/self/mountstats)
reads=$(awk -v m="$mnt" '$1 == "device" { on = ($5 == m) } on && $1 == "READ:" { print $2 " " $3; exit }' /proc/self/mountstats)
set -- $reads
echo "kernel client (fio, proto=rdma): worst read latency $((worst / 1000)) ms across the restart, $((${2:-0} - ${1:-0})) READs resent, ${connects:-?} connects"
ours_worst=$(grep -o '"lat_us": *{[^}]*}' ours.json | head -1 | sed 's/.*"max": *\([0-9.]*\).*/\1/')
echo "ours (nfsrdma-bench, proto=rdma): $(grep 'outage: ' ours.out | sed 's/^ *note: //; s/; the figures include.*//'), worst read latency ${ours_worst%.*} us"
# The anchor: the kernel client across the same restart. Our worst latency
# over the kernel's says who was without service longer (below 1: ours less).
awk -v o="${ours_worst:-0}" -v k="${worst:-0}" 'BEGIN { if (k > 0) printf "outage ratio (worst latency) ours/kernel = %.2fx\n", o / k }'
