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
