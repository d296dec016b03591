#!/bin/sh
# Why: proves the rdma_cm path (address/route resolution, connect, SEND and
# RDMA READ/WRITE) between the in-guest hosts: rping server on rxe0's address,
# client bound to rxe1's, with data verification.
# vm-timeout: 90
set -eu
. "$VM_LIB/vm.sh"

count=20
port=7174
rping -s -a "$SERVER_IP" -p "$port" -C "$count" -V >server.log 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
vm_wait 30 "rping listening on rdma_cm port $port" vm_rdma_listening "$port" ||
  { cat server.log; rdma resource show cm_id || true; vm_fail "rping server did not listen"; }

if ! timeout 60 rping -c -a "$SERVER_IP" -I "$CLIENT_IP" -p "$port" -C "$count" -v -V >client.log 2>&1; then
  cat client.log server.log
  vm_fail "rping client failed"
fi
wait "$server" || { cat server.log; vm_fail "rping server failed"; }
trap - EXIT
pings=$(grep -c '^ping data:' client.log || true)
tail -n 2 client.log
[ "$pings" -eq "$count" ] || vm_fail "rping client verified $pings of $count pings"
echo "rping: $pings verified pings $CLIENT_IP -> $SERVER_IP"
