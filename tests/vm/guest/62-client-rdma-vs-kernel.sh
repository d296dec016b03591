#!/bin/sh
# Why: the userspace client over RPC-over-RDMA is only worth having if it keeps
# up with the kernel's NFS/RDMA client on the same export in the same boot:
# 4 KiB random reads at QD32 (IOPS) and 1 MiB sequential reads at QD8 (MiB/s),
# ours through nfsrdma-bench anchor --only nfsrdma, the kernel's through fio
# (O_DIRECT, libaio) on a proto=rdma mount. Prints both and the ratios; also
# checks cross-client data: a file we write over RDMA reads back byte-exact
# through the kernel's proto=rdma mount, and the reverse.
# vm-timeout: 420
set -eu
. "$VM_LIB/vm.sh"
. "$VM_LIB/knfsd.sh"
command -v nfsrdma-bench >/dev/null || vm_fail "nfsrdma-bench is not in the overlay"
command -v nfsrdma-client >/dev/null || vm_fail "nfsrdma-client is not in the overlay"
mnt=$VM_TMP/kmnt
trap 'umount -f "$mnt" 2>/dev/null || true; knfsd_stop' EXIT
trap 'exit 143' TERM INT
knfsd_start
knfsd_mount "$mnt"
url="nfs://$SERVER_IP:20049$KNFSD_EXPORT"
q="?proto=rdma&bind=$CLIENT_IP&timeout=30000"

# Cross-client checks.
head -c 3145735 /dev/urandom >ours.bin
timeout 120 nfsrdma-client cp ours.bin "$url/ours.bin$q" || vm_fail "nfsrdma-client cp over rdma"
[ "$(sha256sum <"$mnt/ours.bin" | cut -d' ' -f1)" = "$(sha256sum <ours.bin | cut -d' ' -f1)" ] ||
  vm_fail "file written by nfsrdma over RDMA differs when read through the kernel's rdma mount"
head -c 2097155 /dev/urandom >"$mnt/kernel.bin"
sync
timeout 120 nfsrdma-client cp "$url/kernel.bin$q" kernel-back.bin || vm_fail "nfsrdma-client cp from server"
[ "$(sha256sum <kernel-back.bin | cut -d' ' -f1)" = "$(sha256sum <"$mnt/kernel.bin" | cut -d' ' -f1)" ] ||
  vm_fail "file written through the kernel's rdma mount differs when read by nfsrdma over RDMA"
echo "cross-client: nfsrdma(rdma) -> kernel(rdma) and kernel(rdma) -> nfsrdma(rdma) byte-exact"
# Per-I/O memory registration moves the same bytes.
timeout 120 nfsrdma-client --stats cp ours.bin "$url/perio.bin$q&memreg=per-io" 2>perio.stats ||
  { cat perio.stats; vm_fail "cp with memreg=per-io"; }
grep -q 'memreg=per-io' perio.stats || { cat perio.stats; vm_fail "--stats does not show memreg=per-io"; }
timeout 120 nfsrdma-client cp "$url/perio.bin$q&memreg=per-io" perio-back.bin || vm_fail "cp back with memreg=per-io"
[ "$(sha256sum <perio-back.bin | cut -d' ' -f1)" = "$(sha256sum <ours.bin | cut -d' ' -f1)" ] ||
  vm_fail "memreg=per-io round trip differs"
grep '^xprt: rdma' perio.stats
echo "memreg=per-io: round trip byte-exact"

# Ours.
runtime=5
timeout 300 nfsrdma-bench anchor --only nfsrdma --url "$url$q" --size-mib 64 --runtime "$runtime" \
  --json ours.json >ours.txt 2>&1 || { cat ours.txt; vm_fail "nfsrdma-bench anchor over rdma"; }
cat ours.txt
our_iops=$(awk '$1 == "4k-randread" && $3 == "nfsrdma" { print $4 }' ours.txt)
our_mib=$(awk '$1 == "1m-seqread" && $3 == "nfsrdma" { print $5 }' ours.txt)
[ -n "$our_iops" ] && [ -n "$our_mib" ] || vm_fail "no nfsrdma rows in the anchor output"

# The kernel client, same export, same sizes.
fio_run() {
  timeout 120 fio --name="$1" --filename="$mnt/fio.dat" --size=64m --rw="$2" --bs="$3" --iodepth="$4" \
    --ioengine=libaio --direct=1 --time_based --runtime="$runtime" --minimal >"$1.fio" 2>&1 ||
    { cat "$1.fio"; vm_fail "fio $1"; }
}
fio_run k4k randread 4k 32
fio_run k1m read 1m 8
# --minimal (terse v3): field 7 read bandwidth KiB/s, field 8 read IOPS.
k_iops=$(awk -F';' '{ print $8 }' k4k.fio | tail -n 1)
k_mib=$(awk -F';' '{ printf "%.1f", $7 / 1024 }' k1m.fio | tail -n 1)
awk -v oi="$our_iops" -v ki="$k_iops" -v om="$our_mib" -v km="$k_mib" 'BEGIN {
  printf "4k-randread QD32: nfsrdma %.1f IOPS, kernel %.1f IOPS, ratio %.2fx\n", oi, ki, (ki > 0 ? oi / ki : 0)
  printf "1m-seqread  QD8 : nfsrdma %.1f MiB/s, kernel %.1f MiB/s, ratio %.2fx\n", om, km, (km > 0 ? om / km : 0)
}'
awk -v oi="$our_iops" -v ki="$k_iops" -v om="$our_mib" -v km="$k_mib" \
  'BEGIN { exit !(oi >= ki && om >= km) }' ||
  echo "NOTE: below the kernel client on at least one workload (see the ratios above)"
