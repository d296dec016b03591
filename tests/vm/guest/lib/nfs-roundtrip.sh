# Kernel-client round trip against the knfsd fixture (sourced; dash).
# Why: the RDMA and TCP mount tests must check exactly the same things, so the
# only difference between them is the transport they ask for.

# nfs_roundtrip PROTO PORT: starts the knfsd fixture, mounts the export with
# NFSv4.2 over PROTO (rdma|tcp) at PORT, checks mountstats names that
# transport, and moves a 16 MiB random file each way, comparing sha256 on both
# sides; also checks the client's server read/write byte counters saw the
# data. NFS_MOUNT_PATH overrides the path mounted (default: the export).
nfs_roundtrip() {
  _proto=$1
  _port=$2
  _mnt=$VM_TMP/mnt
  _size=$((16 * 1024 * 1024))
  trap 'umount -f "$_mnt" 2>/dev/null || true; knfsd_stop' EXIT
  trap 'exit 143' TERM INT
  knfsd_start

  echo "mounting $SERVER_IP:${NFS_MOUNT_PATH:-$KNFSD_EXPORT} over $_proto port $_port"
  knfsd_mount "$_mnt" "$_proto" "$_port" "${NFS_MOUNT_PATH:-}"

  _xprt=$(awk -v m="$_mnt" '
    $1 == "device" { inside = ($5 == m) }
    inside && $1 == "xprt:" { print $2; exit }' /proc/self/mountstats)
  [ "$_xprt" = "$_proto" ] || vm_fail "mountstats shows 'xprt: $_xprt' for $_mnt, expected '$_proto'"
  echo "mountstats: xprt: $_xprt; options: $(grep " $_mnt " /proc/mounts | cut -d' ' -f4)"

  # Client -> server: written through the mount, read back from the exported
  # tmpfs on the server side.
  head -c "$_size" /dev/urandom >client-src.bin
  _want=$(sha256sum <client-src.bin | cut -d' ' -f1)
  dd if=client-src.bin of="$_mnt/from-client.bin" bs=1M conv=fsync status=none ||
    vm_fail "writing 16 MiB through the $_proto mount"
  _got=$(sha256sum <"$KNFSD_EXPORT/from-client.bin" | cut -d' ' -f1)
  [ "$_got" = "$_want" ] || vm_fail "client->server over $_proto: sha256 $_got on the server, wrote $_want"

  # Server -> client: written on the server side, read through the mount.
  head -c "$_size" /dev/urandom >"$KNFSD_EXPORT/from-server.bin"
  _want=$(sha256sum <"$KNFSD_EXPORT/from-server.bin" | cut -d' ' -f1)
  _got=$(sha256sum <"$_mnt/from-server.bin" | cut -d' ' -f1) ||
    vm_fail "reading 16 MiB through the $_proto mount"
  [ "$_got" = "$_want" ] || vm_fail "server->client over $_proto: sha256 $_got read, server has $_want"

  # The bytes went over the wire: the NFS client's server read/write counters
  # ("bytes:" fields 6 and 7) cover both files.
  _bytes=$(awk -v m="$_mnt" '
    $1 == "device" { inside = ($5 == m) }
    inside && $1 == "bytes:" { print $6, $7; exit }' /proc/self/mountstats)
  set -- $_bytes
  [ "${1:-0}" -ge "$_size" ] && [ "${2:-0}" -ge "$_size" ] ||
    vm_fail "mountstats server read/write bytes are '$_bytes', expected >= $_size each"
  echo "round trip over $_proto: 2 x 16 MiB byte-exact (server read/write bytes: $_bytes)"

  umount "$_mnt" || vm_fail "umount $_mnt"
}
