#!/bin/sh
# Why: `link --tcp` must measure TCP stream bandwidth between the same two
# hosts with the same columns (and the server must confirm and check every
# byte), and `link --both` must print RDMA, TCP and their ratio.
# vm-timeout: 240
set -eu
. "$VM_LIB/vm.sh"
command -v nfsrdma-bench >/dev/null || vm_skip "nfsrdma-bench is not in the build dir (not built)"
port=18518

nfsrdma-bench link --server --keep-serving --bind "$SERVER_IP" -p "$port" --idle-timeout 60 \
  >server.log 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; cat server.log' EXIT
vm_wait 30 "link server on TCP $port" vm_tcp_listening "$port" || vm_fail "link server did not start"
vm_wait 30 "link server on rdma_cm $port" vm_rdma_listening "$port" || vm_fail "link server (rdma) did not start"

timeout 120 nfsrdma-bench link --tcp "$SERVER_IP" --bind "$CLIENT_IP" -p "$port" --timeout 20 -P 2 -s 65536 -n 2000 \
  --verify --report_gbits >tcp.log 2>&1 || { cat tcp.log; vm_fail "link --tcp failed"; }
cat tcp.log
grep -q "verify: passed" tcp.log || vm_fail "link --tcp: no 'verify: passed'"
awk '$1 == 65536 && $2 == 2000 && $4 > 0 { ok = 1 } END { exit !ok }' tcp.log ||
  vm_fail "link --tcp: no '65536 2000 ...' row with a bandwidth"

timeout 150 nfsrdma-bench link --both "$SERVER_IP" --bind "$CLIENT_IP" -p "$port" --timeout 20 -s 65536 -n 1000 \
  --report_gbits >both.log 2>&1 || { cat both.log; vm_fail "link --both failed"; }
cat both.log
grep -q "RDMA/TCP" both.log || vm_fail "link --both: no RDMA/TCP ratio"
awk '/RDMA\/TCP/ { hdr = 1; next } hdr && $1 == 65536 && $4 > 0 { ok = 1 } END { exit !ok }' both.log ||
  vm_fail "link --both: no ratio row"
