#!/bin/sh
# Why: users mount RDMA and TCP side by side to compare them. On NFSv4 the
# kernel cannot do that at one minor version: the second mount's EXCHANGE_ID
# gets the client ID the server already gave this host, and trunking
# detection (nfs4_match_client compares minor version and client ID, not
# the transport) puts it on the first mount's client. So `nfsrdma-client
# mount` refuses --proto both over NFSv4 and a second transport's mount of
# the same minor version. This test shows the kernel behaviour behind that
# (a proto=tcp mount comes up with proto=rdma) and checks both refusals, and
# that the way out it names (another minor version) gets its own transport.
# vm-timeout: 240
set -eu
. "$VM_LIB/vm.sh"
. "$VM_LIB/knfsd.sh"
command -v nfsrdma-client >/dev/null || vm_fail "nfsrdma-client is not in the overlay"
base=$VM_TMP/side
trap 'for d in rdma tcp tcp41; do umount -f "$base-$d" 2>/dev/null || true; done; knfsd_stop' EXIT
trap 'exit 143' TERM INT
knfsd_start
src="$SERVER_IP:$KNFSD_EXPORT"

# proto= of the mount on DIR as /proc/mounts shows it (the transport in use).
proto_of() {
  awk -v d="$1" '$2 == d { n = split($4, o, ","); for (i = 1; i <= n; i++) if (o[i] ~ /^proto=/) { sub(/^proto=/, "", o[i]); print o[i] } }' /proc/mounts
}

if nfsrdma-client mount "$src" "$base" --proto both >both.out 2>&1; then
  cat both.out; vm_fail "--proto both over NFSv4.2 was planned"
fi
grep -q "the tcp mount would run over RDMA" both.out || { cat both.out; vm_fail "--proto both refused without the reason"; }
echo "--proto both over NFSv4.2: refused ($(tail -n 1 both.out | cut -c1-120)...)"

nfsrdma-client mount "$src" "$base-rdma" --proto rdma --run >rdma.out 2>&1 || { cat rdma.out; vm_fail "mount --proto rdma --run"; }
[ "$(proto_of "$base-rdma")" = rdma ] || vm_fail "the rdma mount shows proto=$(proto_of "$base-rdma")"

if nfsrdma-client mount "$src" "$base-tcp" --proto tcp >tcp.out 2>&1; then
  cat tcp.out; vm_fail "a proto=tcp NFSv4.2 mount next to the rdma one was planned without a problem"
fi
grep -q "would give this proto=tcp mount that mount's NFSv4 client" tcp.out || { cat tcp.out; vm_fail "the tcp mount refused without the reason"; }

# The kernel behaviour behind the refusal: the same mount made by hand.
mkdir -p "$base-tcp" "$base-tcp41"
timeout 60 mount.nfs "$src" "$base-tcp" -o vers=4.2,proto=tcp,nosharecache,retry=0 || vm_fail "mount.nfs proto=tcp vers=4.2"
got=$(proto_of "$base-tcp")
echo "kernel: a proto=tcp vers=4.2 mount next to proto=rdma vers=4.2 runs with proto=$got"
[ "$got" = rdma ] || vm_fail "the kernel gave the tcp mount proto=$got: trunking no longer crosses transports, so the refusal in MountPlan should be revisited"
umount "$base-tcp" || vm_fail "umount $base-tcp"

# The way out the message names: another minor version is another client.
nfsrdma-client mount "$src" "$base-tcp41" --proto tcp --vers 4.1 --run >tcp41.out 2>&1 || { cat tcp41.out; vm_fail "mount --proto tcp --vers 4.1 --run"; }
got=$(proto_of "$base-tcp41")
echo "kernel: a proto=tcp vers=4.1 mount next to proto=rdma vers=4.2 runs with proto=$got"
[ "$got" = tcp ] || vm_fail "vers=4.1 over tcp next to 4.2 over rdma shows proto=$got"
nfsrdma-client umount "$src" "$base-tcp41" --proto tcp --vers 4.1 --run >/dev/null || vm_fail "umount tcp41"
nfsrdma-client umount "$src" "$base-rdma" --run >/dev/null || vm_fail "umount rdma"
echo "mount both: refusals hold; another minor version gets its own transport"
