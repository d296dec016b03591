#!/bin/sh
# Why: `nfsrdma-bench tune` must find and fix what a detuned knfsd gets
# wrong, through nfsrdma-server's apply and rollback, and leave the server
# as it found it. The server is set up as an nfsrdma user has it: by
# `nfsrdma-server apply` of a config with 1 nfsd thread and svcrdma's
# max_requests at 8 (its undo record pending), exporting a slow disk. The kernel client's target
# starts from nconnect=1,rsize=wsize=4096, and tune mounts it itself (once
# per trial, in a directory of its own, beside a mount of the user's that
# it must leave alone). Checked:
#   - the recommendation changes a server knob and its gain is confirmed
#     against the start in alternated runs (interval above 0);
#   - after the run (tune rolls back and applies the config again): the
#     server's files (/etc/exports, our exports file, /etc/nfs.conf) and
#     kernel values (threads, max_requests, port list, versions, lease and
#     grace, the export table) byte-identical to before; the user's undo
#     record there again; no trial mount left; the user's mount as it was;
#   - Ctrl-C while a server change is in effect: the same, exit 130.
# vm-timeout: 600
set -eu
. "$VM_LIB/vm.sh"
. "$VM_LIB/knfsd.sh"
command -v nfsrdma-bench >/dev/null || vm_fail "nfsrdma-bench is not in the overlay"
command -v nfsrdma-server >/dev/null || vm_fail "nfsrdma-server is not in the overlay"
knob=/proc/sys/sunrpc/svc_rdma/max_requests
threads_file=/proc/fs/nfsd/threads
user_mnt=$VM_TMP/user
bg=""
cleanup() {
  if [ -n "$bg" ]; then kill "$bg" 2>/dev/null || true; fi
  umount -f "$user_mnt" 2>/dev/null || true
  knfsd_detuned_cleanup tuneslow
}
KNFSD_EXPORT=/srv/tune
trap cleanup EXIT
trap 'exit 143' TERM INT
# The export: ext4 on a ramdisk behind dm-delay (3 ms a request), as on a
# slow disk, and every trial's reads start cold (--drop-server-cache: the
# guest's page cache is the server's too), so that nfsd's one thread waits
# on the disk with the requests queued behind it. The detuned server, set
# up by nfsrdma-server (as the user would have).
knfsd_slow_disk tuneslow
knfsd_apply_detuned server.yaml
# A mount of the user's, which tune must leave alone. At the same NFS minor
# version it would lend tune's mounts its client (connections, credits),
# and tune refuses; at another one, each has its own.
knfsd_mount "$user_mnt"
rc=0
nfsrdma-bench tune --target "knfs:$SERVER_IP:$KNFSD_EXPORT?proto=rdma" --budget 1m >shared.txt 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "the kernel gives a new proto=rdma,vers=4.2 mount of that server the same NFS client" shared.txt ||
  { cat shared.txt >&2; vm_fail "tune beside a mount sharing its client exited $rc"; }
umount "$user_mnt"
KNFSD_MOUNT_VERS=4.1 knfsd_mount "$user_mnt"
user_line=$(grep " $user_mnt " /proc/mounts)

# What must come back: the server's files and kernel values.
snapshot() {
  echo "== /etc/exports"
  cat /etc/exports
  echo "== /etc/exports.d"
  cat /etc/exports.d/* 2>/dev/null || true
  echo "== /etc/nfs.conf"
  cat /etc/nfs.conf 2>/dev/null || echo "(none)"
  echo "== kernel"
  for f in "$threads_file" "$knob" /proc/fs/nfsd/portlist /proc/fs/nfsd/versions \
    /proc/fs/nfsd/nfsv4leasetime /proc/fs/nfsd/nfsv4gracetime; do
    echo "$f: $(tr '\n' ' ' <"$f")"
  done
  echo "== exportfs -v"
  exportfs -v
}
same_as_before() {
  snapshot >"after-$1.txt"
  cmp -s before.txt "after-$1.txt" || {
    diff before.txt "after-$1.txt" >&2 || true
    vm_fail "$1: the server differs from before tune"
  }
  [ -e /var/lib/nfsrdma/last-apply.yaml ] || vm_fail "$1: the user's undo record is gone"
  ! grep -q "nfsrdma-tune-mnt" /proc/mounts || vm_fail "$1: a trial mount was left: $(grep nfsrdma-tune-mnt /proc/mounts)"
  [ "$(grep " $user_mnt " /proc/mounts)" = "$user_line" ] || vm_fail "$1: the user's mount changed"
}
snapshot >before.txt

target="knfs:$SERVER_IP:$KNFSD_EXPORT?proto=rdma&nconnect=1&rsize=4096&wsize=4096"
tune_args="--target $target --profile 4k-randread --size 32m --runtime 2 --ramp 0.3 --drop-server-cache
  --server-config server.yaml --allow-server-changes --work-dir $VM_TMP"
# shellcheck disable=SC2086 # the words of tune_args are meant to split
rc=0
nfsrdma-bench tune $tune_args --budget "${TUNE_BUDGET:-3m}" --json tune.json >tune.txt 2>&1 || rc=$?
[ "$rc" = 0 ] || {
  cat tune.txt >&2
  vm_fail "tune exited $rc"
}
cat tune.txt
grep -q '"changed": true' tune.json || vm_fail "tune recommended no change from the detuned start"
grep -q '"server_fragment": "[a-z]' tune.json || vm_fail "the recommendation changes no server knob"
grep -q 'the server is as it began.*applied again' tune.txt || vm_fail "tune did not say it put the server back"
low=$(grep -o '"gain_low": [0-9.e+-]*' tune.json | sed 's/.*: //')
echo "TUNE $(grep -o '"keys": "[^"]*"' tune.json) gain $(grep -o '"gain": [0-9.e+-]*' tune.json | sed 's/.*: //') (low $low)"
awk -v l="$low" 'BEGIN { exit !(l > 0) }' || vm_fail "the gain's interval reaches 0 ($low)"
same_as_before run

# Ctrl-C while a server change is in effect.
# shellcheck disable=SC2086
nfsrdma-bench tune $tune_args --budget 4m >tune-int.txt 2>&1 &
bg=$!
vm_wait 120 "a server change by tune" sh -c \
  "[ \$(cat $threads_file) != 1 ] || [ \$(cat $knob) != 8 ]" || vm_fail "tune changed nothing on the server in 120 s"
kill -INT "$bg"
rc=0
wait "$bg" || rc=$?
bg=""
cat tune-int.txt
[ "$rc" = 130 ] || vm_fail "tune after SIGINT exited $rc, expected 130"
same_as_before interrupt
echo "tune fixed the detuned server and left it, and the user's mount, as it found them"
