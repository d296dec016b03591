# Shell fixture for the guest's kernel NFS server (sourced by guest tests; dash).
# Why: the NFS tests need a knfsd exporting a scratch tmpfs over TCP 2049 and
# RDMA 20049, NFSv4 only, with the grace period ended so the first OPEN does
# not wait. This is the hand-made configuration that `nfsrdma-server apply`
# will take over; knfsd_stop puts the guest back so the next test starts clean.
# /init has already loaded nfsd and mounted /proc/fs/nfsd and rpc_pipefs.

KNFSD_EXPORT=${KNFSD_EXPORT:-/srv/export}

# knfsd_start: exports $KNFSD_EXPORT to the in-guest network and starts nfsd
# with TCP 2049 and RDMA 20049 listeners; fails the test when one is missing.
knfsd_start() {
  mkdir -p "$KNFSD_EXPORT"
  if ! grep -q " $KNFSD_EXPORT tmpfs " /proc/mounts; then
    mount -t tmpfs -o size=512m knfsd-export "$KNFSD_EXPORT" || vm_fail "tmpfs for $KNFSD_EXPORT"
  fi
  chmod 0777 "$KNFSD_EXPORT"
  # tmpfs has no UUID, so the export needs an explicit fsid; RDMA clients
  # connect from unprivileged ports, hence insecure.
  echo "$KNFSD_EXPORT 198.18.0.0/15(rw,insecure,no_root_squash,no_subtree_check,sync,fsid=1)" >/etc/exports
  mkdir -p /var/lib/nfs/v4recovery
  exportfs -ra || vm_fail "exportfs -ra"
  rpc.mountd -N 3 -u || vm_fail "rpc.mountd"
  # Versions first, then grace/lease, then ports and threads: rpc.nfsd writes
  # them in that order. No -N 2 (it starts no threads on this kernel).
  rpc.nfsd -N 3 -U -G 10 -L 10 --rdma=20049 8 || vm_fail "rpc.nfsd"
  if ! grep -q '^rdma 20049$' /proc/fs/nfsd/portlist; then
    echo 'rdma 20049' >/proc/fs/nfsd/portlist || vm_fail "adding rdma 20049 to /proc/fs/nfsd/portlist"
  fi
  echo "knfsd portlist: $(tr '\n' ' ' </proc/fs/nfsd/portlist)"
  grep -q '^rdma 20049$' /proc/fs/nfsd/portlist || vm_fail "no 'rdma 20049' in /proc/fs/nfsd/portlist"
  grep -q '^tcp 2049$' /proc/fs/nfsd/portlist || vm_fail "no 'tcp 2049' in /proc/fs/nfsd/portlist"
  vm_wait 20 "nfsd on TCP 2049" vm_tcp_listening 2049 || vm_fail "nfsd not listening on TCP 2049"
  vm_wait 20 "svcrdma on 20049" vm_rdma_listening 20049 || vm_fail "svcrdma not listening on 20049"
  echo Y >/proc/fs/nfsd/v4_end_grace || vm_fail "ending the NFSv4 grace period"
}

# knfsd_stop: stops nfsd threads, unexports and stops mountd (best effort,
# bounded); used from EXIT traps.
knfsd_stop() {
  rpc.nfsd 0 2>/dev/null || true
  exportfs -au 2>/dev/null || true
  : >/etc/exports
  pkill -x rpc.mountd 2>/dev/null || true
  vm_wait 10 "rpc.mountd to exit" sh -c '! pgrep -x rpc.mountd' || true
  umount "$KNFSD_EXPORT" 2>/dev/null || true
}
