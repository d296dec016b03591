#!/bin/sh
# Why: `nfsrdma-bench devices` is what operators read to check a RoCE setup;
# it must list both soft-RoCE devices with the IPv4 address each carries in
# its RoCE v2 GID and the netdev behind it, in the table and in the JSON.
# vm-timeout: 60
set -eu
. "$VM_LIB/vm.sh"
command -v nfsrdma-bench >/dev/null || vm_skip "nfsrdma-bench is not in the build dir (not built)"

nfsrdma-bench devices >devices.txt 2>&1 || { cat devices.txt; vm_fail "devices exited non-zero"; }
cat devices.txt
nfsrdma-bench devices --json >devices.json 2>&1 || { cat devices.json; vm_fail "devices --json exited non-zero"; }
cat devices.json

# check DEV IP NETDEV: a "GID" line under DEV's rows carries IP as RoCE v2 on NETDEV.
check() {
  awk -v dev="$1" -v ip="$2" -v nd="$3" '
    $1 ~ /^[a-z]/ && $1 != "device" { current = $1 }
    $1 == "GID" && current == dev && $0 ~ /RoCE v2/ && $(NF-1) == ip && $NF == nd { found = 1 }
    END { exit !found }' devices.txt ||
    vm_fail "devices: no RoCE v2 GID with $2 on $3 under $1"
  grep -q "\"name\": \"$1\"" devices.json || vm_fail "devices --json: no device $1"
  grep -q "\"ip\": \"$2\"" devices.json || vm_fail "devices --json: no GID with ip $2"
  echo "devices: $1 carries $2 (RoCE v2) on $3"
}
check "$SERVER_DEV" "$SERVER_IP" "$SERVER_NETDEV"
check "$CLIENT_DEV" "$CLIENT_IP" "$CLIENT_NETDEV"
grep -q "ACTIVE" devices.txt || vm_fail "devices: no ACTIVE port"
