#!/bin/sh
# Why: `nfsrdma-bench devices` is what operators read to check a RoCE setup;
# it must list both soft-RoCE devices with the IPv4 address each carries in
# its RoCE v2 GID and the netdev behind it, in the table and in the JSON.
# The doctors read the same ports: both must see the RoCE v2 GIDs, follow
# the netdev MTU (1500: RoCE path MTU 1024; 9000: 4096) and the rdma_cm's
# default_roce_tos in configfs (WARN at 0, PASS at 106), and the client's
# must find rxe1 as the port the route to the server leaves from.
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

# --- The doctors on the same ports ------------------------------------------
command -v nfsrdma-client >/dev/null && command -v nfsrdma-server >/dev/null ||
  vm_fail "nfsrdma-server or nfsrdma-client is not in the build dir"
# Whatever fails, the MTU, the configfs directory and the mount go back
# as they were for the tests after this one.
mtu_was=$(cat "/sys/class/net/$SERVER_NETDEV/mtu")
tos=/sys/kernel/config/rdma_cm/$CLIENT_DEV
configfs_mounted=
restore() {
  ip link set "$SERVER_NETDEV" mtu "$mtu_was"
  [ ! -d "$tos" ] || rmdir "$tos"
  [ -z "$configfs_mounted" ] || umount /sys/kernel/config
}
trap restore EXIT
# nfsrdma-server doctor exits 1 here (knfsd is not started): its lines count.
server_doctor() { nfsrdma-server doctor >doctor.txt 2>&1 || true; }
# The doctor's output (doctor.txt) has a line with this text (grep's basic regex).
expect() {
  grep -q -- "$1" doctor.txt || { cat doctor.txt; vm_fail "doctor: no line '$1'"; }
  echo "doctor: ${1%\$}"
}
ip link set "$SERVER_NETDEV" mtu 1500 || vm_fail "mtu 1500"
server_doctor
expect "PASS  $SERVER_DEV port 1 RoCE v2 GID: index $SERVER_GID_INDEX carries $SERVER_IP ($SERVER_NETDEV)"
expect "PASS  $SERVER_DEV port 1 MTU: $SERVER_NETDEV mtu 1500, RoCE path MTU 1024 (fine, but every 4 KiB of data is 4 RoCE packets"

if ! mountpoint -q /sys/kernel/config; then
  mount -t configfs none /sys/kernel/config || vm_fail "mount configfs"
  configfs_mounted=1
fi
client_doctor() {
  nfsrdma-client doctor "$SERVER_IP" >doctor.txt 2>&1 || { cat doctor.txt; vm_fail "client doctor exited non-zero"; }
}
# The client's doctor checks every port of the host, rxe0 too: it reads
# the MTU at 9000 (a doctor run is 1 to 3 s under TCG; fewer runs, fewer
# seconds). default_roce_tos without its configfs directory: hostcheck_unit.
ip link set "$SERVER_NETDEV" mtu 9000 || vm_fail "mtu 9000"
mkdir "$tos" || vm_fail "mkdir $tos"
client_doctor
expect "PASS  $SERVER_DEV port 1 MTU: $SERVER_NETDEV mtu 9000, RoCE path MTU 4096$"
expect "PASS  $CLIENT_DEV port 1 RoCE v2 GID: $CLIENT_IP (index $CLIENT_GID_INDEX, $CLIENT_NETDEV)"
expect "PASS  route to $SERVER_IP: leaves from $CLIENT_IP on $CLIENT_NETDEV, held by $CLIENT_DEV port 1 GID index $CLIENT_GID_INDEX (RoCE v2)"
expect "WARN  $CLIENT_DEV port 1 default_roce_tos: 0: the kernel NFS client and server never set a TOS"
echo 106 >"$tos/ports/1/default_roce_tos" || vm_fail "default_roce_tos 106"
client_doctor
expect "PASS  $CLIENT_DEV port 1 default_roce_tos: 106 (DSCP 26)"
