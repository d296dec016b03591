# Shell fixture for the guest's kernel NFS server (sourced by guest tests; dash).
# Why: the NFS tests need a knfsd exporting a scratch tmpfs over TCP 2049 and
# RDMA 20049, NFSv4 only, with the grace period ended so the first OPEN does
# not wait (unless KNFSD_KEEP_GRACE=1). This is the hand-made configuration
# that `nfsrdma-server apply` will take over; knfsd_stop puts the guest back
# so the next test starts clean.
# /init has already loaded nfsd and mounted /proc/fs/nfsd and rpc_pipefs.

KNFSD_EXPORT=${KNFSD_EXPORT:-/srv/export}

# knfsd_start: exports $KNFSD_EXPORT (a tmpfs unless something is mounted
# there already) to the in-guest network and starts nfsd
# with TCP 2049 and RDMA 20049 listeners; fails the test when one is missing.
knfsd_start() {
  mkdir -p "$KNFSD_EXPORT"
  # A file system a test mounted there itself (70-block: ext4 on a ramdisk) stays.
  if ! grep -q " $KNFSD_EXPORT " /proc/mounts; then
    mount -t tmpfs -o size=512m knfsd-export "$KNFSD_EXPORT" || vm_fail "tmpfs for $KNFSD_EXPORT"
  fi
  chmod 0777 "$KNFSD_EXPORT"
  # tmpfs has no UUID, so the export needs an explicit fsid; RDMA clients
  # connect from unprivileged ports, hence insecure.
  echo "$KNFSD_EXPORT 198.18.0.0/15(rw,insecure,no_root_squash,no_subtree_check,sync,fsid=1)" >/etc/exports
  mkdir -p /var/lib/nfs/v4recovery
  # A grace period that runs its course: with the usermode helper
  # (nfsdcltrack) the first client's session setup ended it at once (no
  # client recorded before the restart has state to reclaim; v4_end_grace
  # read Y after one `nfsrdma-client stat`). Legacy tracking (the
  # v4recovery directory, chosen when the helper is missing) waits the full
  # -G seconds, as a server does while earlier clients may still reclaim.
  if [ "${KNFSD_KEEP_GRACE:-0}" = 1 ]; then
    [ -r /sys/module/nfsd/parameters/cltrack_prog ] ||
      vm_fail "nfsd has no cltrack_prog parameter (a kernel without legacy client tracking): cannot keep the grace period"
    KNFSD_CLTRACK_SAVED=$(cat /sys/module/nfsd/parameters/cltrack_prog)
    printf '%s' /nonexistent/nfsdcltrack >/sys/module/nfsd/parameters/cltrack_prog ||
      vm_fail "switching nfsd to legacy client tracking"
  fi
  exportfs -ra || vm_fail "exportfs -ra"
  rpc.mountd -N 3 -u || vm_fail "rpc.mountd"
  # Versions first, then grace/lease, then ports and threads: rpc.nfsd writes
  # them in that order. No -N 2 (it starts no threads on this kernel).
  rpc.nfsd -N 3 -U -G "${KNFSD_GRACE_SECONDS:-10}" -L 10 --rdma=20049 8 || vm_fail "rpc.nfsd"
  if ! grep -q '^rdma 20049$' /proc/fs/nfsd/portlist; then
    echo 'rdma 20049' >/proc/fs/nfsd/portlist || vm_fail "adding rdma 20049 to /proc/fs/nfsd/portlist"
  fi
  echo "knfsd portlist: $(tr '\n' ' ' </proc/fs/nfsd/portlist)"
  grep -q '^rdma 20049$' /proc/fs/nfsd/portlist || vm_fail "no 'rdma 20049' in /proc/fs/nfsd/portlist"
  grep -q '^tcp 2049$' /proc/fs/nfsd/portlist || vm_fail "no 'tcp 2049' in /proc/fs/nfsd/portlist"
  vm_wait 20 "nfsd on TCP 2049" vm_tcp_listening 2049 || vm_fail "nfsd not listening on TCP 2049"
  vm_wait 20 "svcrdma on 20049" vm_rdma_listening 20049 || vm_fail "svcrdma not listening on 20049"
  # KNFSD_KEEP_GRACE=1: the grace period (-G seconds from rpc.nfsd) runs its
  # course, as after a real server restart.
  if [ "${KNFSD_KEEP_GRACE:-0}" = 1 ]; then
    echo "knfsd: in its ${KNFSD_GRACE_SECONDS:-10} s grace period"
  else
    echo Y >/proc/fs/nfsd/v4_end_grace || vm_fail "ending the NFSv4 grace period"
  fi
}

# knfsd_mount DIR [PROTO [PORT [PATH]]]: the kernel NFS client mounts
# PATH (default: the export) at DIR with NFSv4.2 over PROTO (default rdma)
# at PORT (default 20049), or fails the test naming what it asked for.
# KNFSD_MOUNT_VERS overrides the version (e.g. 4.1); KNFSD_MOUNT_OPTS adds
# options at the end (e.g. nconnect=4).
knfsd_mount() {
  _km_src="$SERVER_IP:${4:-$KNFSD_EXPORT}"
  _km_opts="vers=${KNFSD_MOUNT_VERS:-4.2},proto=${2:-rdma},port=${3:-20049},retry=0${KNFSD_MOUNT_OPTS:+,$KNFSD_MOUNT_OPTS}"
  mkdir -p "$1"
  timeout 60 mount.nfs "$_km_src" "$1" -o "$_km_opts" || vm_fail "mount.nfs $_km_src $1 -o $_km_opts failed"
}

# knfsd_stop: stops nfsd threads, unexports and stops mountd (best effort,
# bounded); used from EXIT traps.
knfsd_stop() {
  rpc.nfsd 0 2>/dev/null || true
  if [ -n "${KNFSD_CLTRACK_SAVED:-}" ]; then
    printf '%s' "$KNFSD_CLTRACK_SAVED" >/sys/module/nfsd/parameters/cltrack_prog || true
    KNFSD_CLTRACK_SAVED=
    # The legacy tracking's client records: the next start begins with none.
    find /var/lib/nfs/v4recovery -mindepth 1 -delete 2>/dev/null || true
  fi
  exportfs -au 2>/dev/null || true
  : >/etc/exports
  pkill -x rpc.mountd 2>/dev/null || true
  vm_wait 10 "rpc.mountd to exit" sh -c '! pgrep -x rpc.mountd' || true
  umount "$KNFSD_EXPORT" 2>/dev/null || true
}

# knfsd_slow_disk NAME: $KNFSD_EXPORT on ext4 on /dev/ram1 behind dm-delay
# NAME, 3 ms a request, as on a slow disk. Cached reads never see the
# delay; reads after a cache drop wait for it in nfsd's threads.
knfsd_slow_disk() {
  modprobe -a dm-delay ext4 || vm_fail "modprobe dm-delay ext4"
  # Two 128 MiB ramdisks, as 70-block loads them (a no-op after it).
  modprobe brd rd_nr=2 rd_size=131072 || vm_fail "modprobe brd"
  [ "$(blockdev --getsize64 /dev/ram1)" -ge 134217728 ] || vm_fail "/dev/ram1 is smaller than 128 MiB"
  DM_DISABLE_UDEV=1 dmsetup create "$1" --noudevsync \
    --table "0 $(blockdev --getsz /dev/ram1) delay /dev/ram1 0 3" ||
    vm_fail "dmsetup create $1 (dm-delay on /dev/ram1)"
  DM_DISABLE_UDEV=1 dmsetup mknodes "$1"
  mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "/dev/mapper/$1" || vm_fail "mkfs.ext4 /dev/mapper/$1"
  mkdir -p "$KNFSD_EXPORT"
  mount "/dev/mapper/$1" "$KNFSD_EXPORT" || vm_fail "mount /dev/mapper/$1 $KNFSD_EXPORT"
  chmod 0777 "$KNFSD_EXPORT"
}

# knfsd_slow_disk_remove NAME: unmounts the export and removes NAME (best
# effort; for EXIT traps).
knfsd_slow_disk_remove() {
  umount "$KNFSD_EXPORT" 2>/dev/null || true
  DM_DISABLE_UDEV=1 dmsetup remove "$1" 2>/dev/null || true
}

# knfsd_server_yaml FILE THREADS FSID [MAX_REQUESTS]: nfsrdma-server's
# config for $KNFSD_EXPORT (rw to the guest's networks, TCP 2049 and RDMA
# 20049, NFSv4.1 and 4.2, lease and grace 10 s) with THREADS nfsd threads
# and, when given, svcrdma's max_requests.
knfsd_server_yaml() {
  cat >"$1" <<YAML
exports:
  - path: $KNFSD_EXPORT
    clients:
      - host: 198.18.0.0/15
        access: rw
        squash: no_root_squash
        insecure: true
        fsid: $3
transports:
  tcp: {enabled: true, port: 2049}
  rdma: {enabled: true, port: 20049}
nfsd:
  threads: $2
  versions: ["4.1", "4.2"]
  lease_time: 10
  grace_time: 10
YAML
  if [ -n "${4:-}" ]; then printf 'tuning:\n  max_requests: %s\n' "$4" >>"$1"; fi
}

# knfsd_apply_detuned CONFIG: the server as tune finds it, set up the way a
# user of nfsrdma has it: `nfsrdma-server apply` of CONFIG (written here)
# exporting $KNFSD_EXPORT with 1 nfsd thread and svcrdma's max_requests at
# 8, its undo record pending. Fails the test when the values did not take.
# knfsd_detuned_cleanup puts it all back.
knfsd_apply_detuned() {
  KNFSD_SAVED_CREDITS=$(cat /proc/sys/sunrpc/svc_rdma/max_requests)
  knfsd_server_yaml "$1" 1 9 8
  mkdir -p /var/lib/nfs/v4recovery
  rpc.mountd -N 3 -u || vm_fail "rpc.mountd"
  nfsrdma-server apply "$1" >apply.txt 2>&1 || { cat apply.txt; vm_fail "the user's apply of $1"; }
  echo Y >/proc/fs/nfsd/v4_end_grace 2>/dev/null || true
  vm_wait 20 "svcrdma on 20049" vm_rdma_listening 20049 || vm_fail "svcrdma not listening on 20049"
  [ "$(cat /proc/fs/nfsd/threads)" = 1 ] && [ "$(cat /proc/sys/sunrpc/svc_rdma/max_requests)" = 8 ] ||
    vm_fail "the detuned apply left threads $(cat /proc/fs/nfsd/threads), max_requests $(cat /proc/sys/sunrpc/svc_rdma/max_requests)"
}

# knfsd_detuned_cleanup DMNAME: rolls the apply back, stops knfsd, restores
# max_requests and removes the slow disk DMNAME (best effort; EXIT traps).
knfsd_detuned_cleanup() {
  nfsrdma-server rollback >/dev/null 2>&1 || true
  rm -f /etc/exports.d/nfsrdma.exports
  if [ -n "${KNFSD_SAVED_CREDITS:-}" ]; then
    echo "$KNFSD_SAVED_CREDITS" >/proc/sys/sunrpc/svc_rdma/max_requests || true
  fi
  knfsd_stop
  knfsd_slow_disk_remove "$1"
}
