#!/bin/sh
# Why: a client pointed at a host with no link server must fail fast with a
# message that says so (not hang, not abort), over RDMA and over TCP.
# vm-timeout: 90
set -eu
. "$VM_LIB/vm.sh"
command -v nfsrdma-bench >/dev/null || vm_skip "nfsrdma-bench is not in the build dir (not built)"
port=18599

for mode in rdma tcp; do
  extra=""
  [ "$mode" = tcp ] && extra=--tcp
  start=$(vm_uptime)
  if timeout 30 nfsrdma-bench link $extra "$SERVER_IP" --bind "$CLIENT_IP" -p "$port" --timeout 5 \
    >"$mode.log" 2>&1; then
    cat "$mode.log"
    vm_fail "$mode: link with no server exited 0"
  else
    rc=$?
  fi
  took=$(($(vm_uptime) - start))
  cat "$mode.log"
  [ "$rc" -ne 124 ] || vm_fail "$mode: link with no server hung until timeout(1) killed it"
  grep -q "no link server at $SERVER_IP:$port" "$mode.log" || vm_fail "$mode: no clear 'no link server' message"
  [ "$took" -le 20 ] || vm_fail "$mode: took ${took}s to give up (timeout 5 s)"
  echo "$mode: clear error after ${took}s (exit $rc)"
done
