#!/bin/sh
# Why: a server restart in the middle of a transfer (rpc.nfsd 0, then started
# again) must not end our client's copy: it reconnects, reclaims its open in
# the grace period (or opens again where there is none), writes again the
# unstable data the restart lost, and the file verifies, over RDMA and over
# TCP. It says on stderr what happened; a hang or an error fails the test.
# vm-timeout: 420
set -eu
. "$VM_LIB/vm.sh"
. "$VM_LIB/knfsd.sh"
command -v nfsrdma-client >/dev/null || vm_fail "nfsrdma-client is not in the overlay"
trap 'knfsd_stop' EXIT
trap 'exit 143' TERM INT
knfsd_start
head -c 67108864 /dev/urandom >big.bin
want=$(sha256sum <big.bin | cut -d' ' -f1)

# restart_during_copy PROTO PORT: one 64 MiB copy across one server restart.
restart_during_copy() {
  dst="$KNFSD_EXPORT/restart-$1.bin"
  url="nfs://$SERVER_IP:$2$KNFSD_EXPORT/restart-$1.bin?proto=$1&bind=$CLIENT_IP&timeout=20000"
  timeout 200 nfsrdma-client --stats cp big.bin "$url" >cp.out 2>cp.err &
  cp_pid=$!
  vm_wait 60 "the $1 copy to start writing" test -s "$dst" || true
  rpc.nfsd 0 || vm_fail "rpc.nfsd 0"
  echo "$1: server stopped mid-transfer ($(stat -c %s "$dst" 2>/dev/null || echo 0) bytes on disk)"
  sleep 1
  rpc.nfsd -N 3 -U -G 10 -L 10 --rdma=20049 8 || vm_fail "restarting rpc.nfsd"
  grep -q '^rdma 20049$' /proc/fs/nfsd/portlist || echo 'rdma 20049' >/proc/fs/nfsd/portlist
  status=0
  wait "$cp_pid" || status=$?
  [ "$status" -ne 124 ] || { cat cp.err; vm_fail "nfsrdma-client hung across the server restart over $1"; }
  [ "$status" -eq 0 ] || { cat cp.err; vm_fail "the $1 copy failed across the restart (exit $status)"; }
  got=$(sha256sum <"$dst" | cut -d' ' -f1)
  [ "$got" = "$want" ] || vm_fail "the $1 copy reported success but the server has sha256 $got, expected $want"
  grep -q '^nfsrdma-client: note: .* s without service)$' cp.err || { cat cp.err; vm_fail "the $1 copy did not say what the restart cost"; }
  echo "restart over $1: the copy completed and verified"
  sed -n 's/^nfsrdma-client: note: /  note: /p; s/^recovery: /  recovery: /p' cp.err
}
restart_during_copy rdma 20049
restart_during_copy tcp 2049
