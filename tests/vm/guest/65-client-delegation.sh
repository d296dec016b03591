#!/bin/sh
# Why: while another client holds a delegation on a file, knfsd answers a
# conflicting OPEN or RENAME with NFS4ERR_DELAY and recalls the delegation.
# Our client must send the call again until the holder has returned it,
# say so once on stderr, and succeed with the right data: the kernel's
# NFS client (holding a read delegation) is the other client.
# vm-timeout: 180
set -eu
. "$VM_LIB/vm.sh"
. "$VM_LIB/knfsd.sh"
command -v nfsrdma-client >/dev/null || vm_fail "nfsrdma-client is not in the overlay"
mnt=$VM_TMP/dmnt
trap 'exec 3<&- 4<&- 2>/dev/null || true; umount -f "$mnt" 2>/dev/null || true; knfsd_stop' EXIT
trap 'exit 143' TERM INT
knfsd_start
knfsd_mount "$mnt"
base="nfs://$SERVER_IP:20049$KNFSD_EXPORT"
q="?proto=rdma&bind=$CLIENT_IP&timeout=30000"

# The kernel client holds a read delegation on FILE while fd N stays open.
hold_delegation() {  # FILE
  _states=""
  for _c in /proc/fs/nfsd/clients/*/states; do _states="$_states$(cat "$_c" 2>/dev/null)"; done
  case $_states in
    *"type: deleg"*"filename: \"/$1\""*) return 0 ;;
  esac
  echo "$_states"
  return 1
}
notice() {  # OP PATH
  echo "nfsrdma-client: $1 $2: NFS4ERR_DELAY (server busy, retry later); sending it again for up to 120000 ms (busy-timeout)"
}

echo "read by the kernel client" >"$KNFSD_EXPORT/held.txt"
exec 3<"$mnt/held.txt"
read -r _ <&3
vm_wait 10 "a read delegation on held.txt" hold_delegation held.txt || vm_fail "knfsd granted the kernel client no read delegation on held.txt"
head -c 1048583 /dev/urandom >src.bin
want=$(sha256sum <src.bin | cut -d' ' -f1)
timeout 60 nfsrdma-client cp src.bin "$base/held.txt$q" 2>cp.err || { cat cp.err; vm_fail "cp over a delegated file failed"; }
cat cp.err
[ "$(cat cp.err)" = "$(notice open "$KNFSD_EXPORT/held.txt")" ] ||
  vm_fail "cp over a delegated file did not print exactly the one DELAY notice"
[ "$(sha256sum <"$KNFSD_EXPORT/held.txt" | cut -d' ' -f1)" = "$want" ] || vm_fail "the file on the server is not what cp wrote"
exec 3<&-
[ "$(sha256sum <"$mnt/held.txt" | cut -d' ' -f1)" = "$want" ] || vm_fail "the kernel client reads old data after the recall"

# RENAME onto a file the kernel client holds a delegation on.
echo "old target" >"$KNFSD_EXPORT/target.txt"
echo "new content" >"$KNFSD_EXPORT/source.txt"
exec 4<"$mnt/target.txt"
read -r _ <&4
vm_wait 10 "a read delegation on target.txt" hold_delegation target.txt || vm_fail "knfsd granted the kernel client no read delegation on target.txt"
timeout 60 nfsrdma-client rename "$base/source.txt$q" "$base/target.txt$q" 2>mv.err ||
  { cat mv.err; vm_fail "rename onto a delegated file failed"; }
cat mv.err
[ "$(cat mv.err)" = "$(notice rename "$KNFSD_EXPORT/source.txt to $KNFSD_EXPORT/target.txt")" ] ||
  vm_fail "rename onto a delegated file did not print exactly the one DELAY notice"
exec 4<&-
[ ! -e "$KNFSD_EXPORT/source.txt" ] && [ "$(cat "$KNFSD_EXPORT/target.txt")" = "new content" ] ||
  vm_fail "the rename did not take place"
echo "delegation: cp (OPEN) and rename over files the kernel client held delegations on were sent again after NFS4ERR_DELAY and succeeded"
