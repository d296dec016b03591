#!/bin/sh
# Why: knfsd grants as many RPC-over-RDMA credits as svc_rdma's
# max_requests allows; when that is fewer than the session's slots, calls
# wait in our transport's backlog for credits that replies give back.
# With 8 credits and thousands of 4 KiB calls both ways, every call must go
# out and complete (none starved into a timeout) and the data must round
# trip byte-exact; --stats shows the credits granted and the backlog used.
# vm-timeout: 260
set -eu
. "$VM_LIB/vm.sh"
. "$VM_LIB/knfsd.sh"
command -v nfsrdma-client >/dev/null || vm_fail "nfsrdma-client is not in the overlay"
knob=/proc/sys/sunrpc/svc_rdma/max_requests
[ -w "$knob" ] || vm_fail "$knob is missing (svcrdma not loaded?)"
old=$(cat "$knob")
echo 8 >"$knob"
trap 'knfsd_stop; echo "$old" >"$knob"' EXIT
trap 'exit 143' TERM INT
knfsd_start
url="nfs://$SERVER_IP:20049$KNFSD_EXPORT/credits.bin"
# 4 KiB I/O: a 16 MiB copy is 4096 calls, with up to the session's slots in flight.
q="?proto=rdma&bind=$CLIENT_IP&timeout=30000&iosize=4096"
head -c 16777216 /dev/urandom >src.bin
timeout 150 nfsrdma-client --stats cp src.bin "$url$q" 2>to.stats || { cat to.stats; vm_fail "cp to the server with 8 credits"; }
timeout 150 nfsrdma-client --stats cp "$url$q" back.bin 2>from.stats || { cat from.stats; vm_fail "cp from the server with 8 credits"; }
grep '^xprt: rdma' to.stats from.stats
for f in to.stats from.stats; do
  grep -q 'timeouts=0 ' "$f" || vm_fail "$f: calls timed out"
  grep -q ' credits=8 ' "$f" || vm_fail "$f: the server did not grant 8 credits"
  grep -Eq ' backlogged=[1-9][0-9]* ' "$f" || vm_fail "$f: no call waited for a credit (the test did not reach the backlog)"
done
cmp -s src.bin "$KNFSD_EXPORT/credits.bin" || vm_fail "the file on the server differs from what was copied"
cmp -s src.bin back.bin || vm_fail "the file copied back differs"
echo "credits: 8 credits, 16 MiB in 4 KiB calls both ways through the backlog, byte-exact"

# The other way: a queue deeper than the default 64 credits asks for as
# many as it has slots, and a server allowing them grants them (svcrdma
# reads max_requests when it accepts a connection).
echo 128 >"$knob"
timeout 150 nfsrdma-client --stats cp "$url$q&qd=128" deep.bin 2>deep.stats || { cat deep.stats; vm_fail "cp with qd=128"; }
grep '^xprt: rdma' deep.stats
grep -q ' credits=128 ' deep.stats || vm_fail "qd=128 with max_requests 128: the client did not get 128 credits"
cmp -s src.bin deep.bin || vm_fail "the file copied back with qd=128 differs"
echo "credits: qd=128 asks for and gets 128 credits"
