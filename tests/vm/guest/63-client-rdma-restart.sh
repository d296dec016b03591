#!/bin/sh
# Why: a server restart in the middle of a transfer (rpc.nfsd 0, then started
# again) must end our RDMA client's copy with either a complete, verified file
# or one clear error line: never a hang, never a silent short or corrupt file.
# vm-timeout: 300
set -eu
. "$VM_LIB/vm.sh"
. "$VM_LIB/knfsd.sh"
command -v nfsrdma-client >/dev/null || vm_fail "nfsrdma-client is not in the overlay"
trap 'knfsd_stop' EXIT
trap 'exit 143' TERM INT
knfsd_start
url="nfs://$SERVER_IP:20049$KNFSD_EXPORT/restart.bin?proto=rdma&bind=$CLIENT_IP&timeout=20000"
head -c 67108864 /dev/urandom >big.bin
want=$(sha256sum <big.bin | cut -d' ' -f1)
timeout 150 nfsrdma-client cp big.bin "$url" >cp.out 2>cp.err &
cp_pid=$!
vm_wait 60 "the copy to start writing" test -s "$KNFSD_EXPORT/restart.bin" || true
rpc.nfsd 0 || vm_fail "rpc.nfsd 0"
echo "server stopped mid-transfer ($(stat -c %s "$KNFSD_EXPORT/restart.bin" 2>/dev/null || echo 0) bytes on disk)"
rpc.nfsd -N 3 -U -G 10 -L 10 --rdma=20049 8 || vm_fail "restarting rpc.nfsd"
grep -q '^rdma 20049$' /proc/fs/nfsd/portlist || echo 'rdma 20049' >/proc/fs/nfsd/portlist
status=0
wait "$cp_pid" || status=$?
[ "$status" -ne 124 ] || vm_fail "nfsrdma-client hung across the server restart (killed by timeout)"
if [ "$status" -eq 0 ]; then
  got=$(sha256sum <"$KNFSD_EXPORT/restart.bin" | cut -d' ' -f1)
  [ "$got" = "$want" ] || vm_fail "copy reported success but the server has sha256 $got, expected $want"
  echo "restart: the copy completed and verified"
else
  lines=$(wc -l <cp.err)
  grep -q '^nfsrdma-client: ' cp.err || { cat cp.err; vm_fail "copy failed (exit $status) without a clear error"; }
  [ "$lines" -eq 1 ] || { cat cp.err; vm_fail "copy failed with $lines error lines, expected one"; }
  echo "restart: the copy failed cleanly (exit $status): $(cat cp.err)"
fi
