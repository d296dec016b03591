#!/bin/sh
# Why: `nfsrdma-server apply` must configure the real knfsd from YAML (export
# with insecure, the rdma 20049 listener, versions, threads), `status` must
# read it back, a second apply must change nothing, and the kernel client
# must then mount it over RDMA and move data byte-exact; rollback must accept
# the record apply wrote with this kernel's values and undo it.
# vm-timeout: 240
set -eu
. "$VM_LIB/vm.sh"
. "$VM_LIB/knfsd.sh"
command -v nfsrdma-server >/dev/null || vm_fail "nfsrdma-server is not in the overlay"
KNFSD_EXPORT=/srv/apply
mnt=$VM_TMP/mnt
mkdir -p "$KNFSD_EXPORT" "$mnt"
mount -t tmpfs -o size=64m apply-export "$KNFSD_EXPORT" || vm_fail "tmpfs for $KNFSD_EXPORT"
chmod 0777 "$KNFSD_EXPORT"
# Leave the guest as the next test expects it: our exports file gone, knfsd stopped.
trap 'umount -f "$mnt" 2>/dev/null || true; nfsrdma-server rollback >/dev/null 2>&1 || true;
  rm -f /etc/exports.d/nfsrdma.exports; knfsd_stop' EXIT
trap 'exit 143' TERM INT
knfsd_server_yaml server.yaml 8 7
mkdir -p /var/lib/nfs/v4recovery
rpc.mountd -N 3 -u || vm_fail "rpc.mountd"
threads_before=$(cat /proc/fs/nfsd/threads)
nfsrdma-server apply server.yaml >apply1.txt 2>&1 || { cat apply1.txt; vm_fail "first apply"; }
cat apply1.txt
grep -q '^rdma 20049$' /proc/fs/nfsd/portlist || vm_fail "apply did not add 'rdma 20049' to the port list"
[ "$(cat /proc/fs/nfsd/threads)" = 8 ] || vm_fail "apply left $(cat /proc/fs/nfsd/threads) nfsd threads, expected 8"
# versions lists 4.1 and 4.2: the kernel implies 4.0 from +4 unless told -4.0.
grep -q -- '-4.0' /proc/fs/nfsd/versions || vm_fail "apply left NFSv4.0 on: versions are '$(cat /proc/fs/nfsd/versions)'"
exportfs -v | grep -q "$KNFSD_EXPORT" || vm_fail "the kernel does not export $KNFSD_EXPORT"
exportfs -v | grep "$KNFSD_EXPORT" -A1 | grep -q insecure || vm_fail "the export lacks insecure"
nfsrdma-server status >status.txt 2>&1 || { cat status.txt; vm_fail "status"; }
cat status.txt
grep -q 'rdma 20049' status.txt || vm_fail "status does not show the rdma 20049 listener"
grep -q "$KNFSD_EXPORT" status.txt || vm_fail "status does not show the export"
nfsrdma-server apply server.yaml >apply2.txt 2>&1 || { cat apply2.txt; vm_fail "second apply"; }
cat apply2.txt
grep -qi 'no change' apply2.txt || vm_fail "the second apply changed something"
[ "$(grep -c '^rdma 20049$' /proc/fs/nfsd/portlist)" -le 2 ] || vm_fail "the second apply added the listener again"
echo Y >/proc/fs/nfsd/v4_end_grace 2>/dev/null || true
vm_wait 20 "svcrdma on 20049" vm_rdma_listening 20049 || vm_fail "svcrdma not listening on 20049"
knfsd_mount "$mnt"
head -c 4194304 /dev/urandom >src.bin
dd if=src.bin of="$mnt/applied.bin" bs=1M conv=fsync status=none || vm_fail "write through the mount"
[ "$(sha256sum <"$KNFSD_EXPORT/applied.bin" | cut -d' ' -f1)" = "$(sha256sum <src.bin | cut -d' ' -f1)" ] ||
  vm_fail "data written over RDMA differs on the server"
umount "$mnt"
# Rollback accepts only what apply could have recorded: the record apply wrote
# here holds this kernel's own values (versions, lease, grace, threads,
# svc_rdma), and rollback must take every one of them back.
nfsrdma-server rollback >rollback.txt 2>&1 || { cat rollback.txt; vm_fail "rollback"; }
cat rollback.txt
grep -q '^Rollback complete' rollback.txt || vm_fail "rollback did not say it completed"
[ ! -e /etc/exports.d/nfsrdma.exports ] || vm_fail "rollback left our exports file"
[ "$(cat /proc/fs/nfsd/threads)" = "$threads_before" ] ||
  vm_fail "rollback left $(cat /proc/fs/nfsd/threads) nfsd threads, not the $threads_before from before apply"
echo "apply, status and a second no-op apply on the real knfsd; RDMA mount byte-exact; rollback takes the record back"
