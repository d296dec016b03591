#!/bin/sh
# Why: a storage engineer serving a fast device over RoCE chooses between NFS
# over RDMA, NVMe over Fabrics and iSER, and wants each against the device
# itself in one table. This boot serves one brd ramdisk (ram0) at once as
# NVMe-oF over RDMA and over TCP (nvmet through configfs, the host's nvme-rdma
# and nvme-tcp by `nvme connect`) and as an iSCSI LUN over TCP and iSER (LIO
# through configfs, open-iscsi's initiator); knfsd exports ext4 on a second
# ramdisk of the same size (ram1: a file system on the LUN the block targets
# overwrite would not survive), over RDMA and TCP. One `nfsrdma-bench
# compare` runs every protocol and the kernel's own proto=rdma mount with
# --verify, the ramdisk itself as the local column, and ratio columns for the
# questions asked: NFS/RDMA against NVMe-oF/RDMA and iSER, RDMA against TCP
# for each protocol.
# vm-timeout: 330
set -eu
. "$VM_LIB/vm.sh"
. "$VM_LIB/knfsd.sh"
command -v nfsrdma-bench >/dev/null || vm_fail "nfsrdma-bench is not in the overlay"
for t in nvme iscsiadm iscsid mkfs.ext4; do command -v "$t" >/dev/null || vm_fail "$t is not in the image"; done

NQN_RDMA=nqn.2026-12.org.nfsrdma:ram0-rdma
NQN_TCP=nqn.2026-12.org.nfsrdma:ram0-tcp
HOSTNQN=nqn.2026-12.org.nfsrdma:client
# Given with the NQN: else nvme-cli derives one the kernel already knows
# under its default host NQN, and refuses the pair.
HOSTID=5c1e8f0a-3b7d-4e2a-9f61-0d2c4b8a7e13
IQN=iqn.2026-12.org.nfsrdma:ram0
NVMET=/sys/kernel/config/nvmet
LIO=/sys/kernel/config/target
KNFSD_EXPORT=/srv/block-export
kmnt=$VM_TMP/knfs
out=$VM_TMP/block-compare

cleanup() {
  umount -f "$kmnt" 2>/dev/null || true
  knfsd_stop
  nvme disconnect -n "$NQN_RDMA" >/dev/null 2>&1 || true
  nvme disconnect -n "$NQN_TCP" >/dev/null 2>&1 || true
  iscsiadm -m node -T "$IQN" --logout >/dev/null 2>&1 || true
  pkill -x iscsid 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 143' TERM INT

modprobe brd rd_nr=2 rd_size=131072 || vm_fail "modprobe brd"
modprobe -a configfs nvmet nvmet-rdma nvmet-tcp nvme-rdma nvme-tcp target_core_iblock \
  iscsi_target_mod iscsi_tcp sd_mod ext4 || vm_fail "modprobe of the block modules"
grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config

# --- NVMe-oF target: a subsystem per transport, both on ram0 ---------------------
# Two subsystems, not one with two ports: the host's native multipath would
# merge one subsystem's RDMA and TCP controllers into one namespace device.
nvmet_port() { # N TRTYPE NQN
  mkdir "$NVMET/ports/$1"
  echo "$2" >"$NVMET/ports/$1/addr_trtype"
  echo ipv4 >"$NVMET/ports/$1/addr_adrfam"
  echo "$SERVER_IP" >"$NVMET/ports/$1/addr_traddr"
  echo 4420 >"$NVMET/ports/$1/addr_trsvcid"
  ln -s "$NVMET/subsystems/$3" "$NVMET/ports/$1/subsystems/$3"
}
for nqn in "$NQN_RDMA" "$NQN_TCP"; do
  mkdir "$NVMET/subsystems/$nqn"
  echo 1 >"$NVMET/subsystems/$nqn/attr_allow_any_host"
  mkdir "$NVMET/subsystems/$nqn/namespaces/1"
  echo /dev/ram0 >"$NVMET/subsystems/$nqn/namespaces/1/device_path"
  echo 1 >"$NVMET/subsystems/$nqn/namespaces/1/enable"
done
nvmet_port 1 rdma "$NQN_RDMA" || vm_fail "nvmet: RDMA port on $SERVER_IP:4420"
nvmet_port 2 tcp "$NQN_TCP" || vm_fail "nvmet: TCP port on $SERVER_IP:4420"

# --- LIO: ram0 as LUN 0 of one target, its portal on TCP and iSER ---------------
mkdir -p "$LIO/core/iblock_0/ram0"
echo "udev_path=/dev/ram0" >"$LIO/core/iblock_0/ram0/control"
echo 1 >"$LIO/core/iblock_0/ram0/enable" || vm_fail "LIO: iblock backstore on /dev/ram0"
tpg=$LIO/iscsi/$IQN/tpgt_1
mkdir -p "$tpg/lun/lun_0"
ln -s "$LIO/core/iblock_0/ram0" "$tpg/lun/lun_0/ram0"
mkdir "$tpg/np/$SERVER_IP:3260" || vm_fail "LIO: portal $SERVER_IP:3260"
# Demo mode: any initiator, no CHAP, LUNs writable.
echo 0 >"$tpg/attrib/authentication"
echo 1 >"$tpg/attrib/generate_node_acls"
echo 1 >"$tpg/attrib/cache_dynamic_acls"
echo 0 >"$tpg/attrib/demo_mode_write_protect"
echo 1 >"$tpg/enable"
iser_why=""
if ! modprobe -a ib_isert ib_iser 2>"$VM_TMP/iser.err"; then
  iser_why="modprobe ib_isert ib_iser: $(cat "$VM_TMP/iser.err")"
elif ! echo 1 >"$tpg/np/$SERVER_IP:3260/iser" 2>"$VM_TMP/iser.err"; then
  iser_why="LIO refused iSER on the portal: $(cat "$VM_TMP/iser.err") (dmesg: $(dmesg | grep -i isert | tail -n 2 | tr '\n' ' '))"
fi

# --- Hosts: nvme connect over both transports, iSCSI and iSER logins -------------
# ns_of NQN: the namespace block device of the connected subsystem NQN.
ns_of() {
  for s in /sys/class/nvme-subsystem/nvme-subsys*; do
    [ "$(cat "$s/subsysnqn" 2>/dev/null)" = "$1" ] || continue
    for n in "$s"/nvme*n*; do
      [ -e "$n" ] && { echo "/dev/${n##*/}"; return 0; }
    done
  done
  return 1
}
nvme_host() { # TRTYPE NQN
  timeout 60 nvme connect -t "$1" -a "$SERVER_IP" -s 4420 -n "$2" --hostnqn "$HOSTNQN" --hostid "$HOSTID" ||
    vm_fail "nvme connect -t $1 -a $SERVER_IP -s 4420 -n $2"
  vm_wait 20 "the $1 namespace of $2" ns_of "$2" || vm_fail "no namespace device for $2"
}
nvme_host rdma "$NQN_RDMA"
nvme_host tcp "$NQN_TCP"
nvmf_rdma=$(ns_of "$NQN_RDMA")
nvme_tcp=$(ns_of "$NQN_TCP")
echo "nvme-rdma: $nvmf_rdma, nvme-tcp: $nvme_tcp"

mkdir -p /etc/iscsi /var/lib/iscsi /run/lock/iscsi
echo "InitiatorName=iqn.2026-12.org.nfsrdma:client" >/etc/iscsi/initiatorname.iscsi
printf 'node.startup = manual\nnode.session.timeo.replacement_timeout = 30\n' >/etc/iscsi/iscsid.conf
iscsid || vm_fail "iscsid"
vm_wait 10 "iscsid" pgrep -x iscsid || vm_fail "iscsid did not start"
# One discovery for both interfaces: a later one through a single interface
# would try to drop the other's node record while its session is up.
iscsi_discover() {
  timeout 60 iscsiadm -m discovery -t sendtargets -p "$SERVER_IP:3260" -I default ${1:+-I iser} >/dev/null
}
iscsi_login() { # IFACE
  timeout 60 iscsiadm -m node -T "$IQN" -p "$SERVER_IP:3260" -I "$1" --login >/dev/null
}
disk_of() { # PROC_NAME_PATTERN (iscsi_tcp, *iser*): the disk of that SCSI host's session
  for hn in /sys/class/scsi_host/host*; do
    # shellcheck disable=SC2254
    case $(cat "$hn/proc_name" 2>/dev/null) in $1) ;; *) continue ;; esac
    for d in "$hn"/device/session*/target*/*/block/*; do
      [ -e "$d" ] && { echo "/dev/${d##*/}"; return 0; }
    done
  done
  return 1
}
if [ -z "$iser_why" ] && ! iscsi_discover iser 2>"$VM_TMP/iser.err"; then
  iser_why="iSCSI discovery through the iser interface failed: $(tr '\n' ' ' <"$VM_TMP/iser.err")"
fi
if [ -n "$iser_why" ]; then iscsi_discover || vm_fail "iSCSI discovery at $SERVER_IP:3260"; fi
iscsi_login default || vm_fail "iSCSI login to $IQN at $SERVER_IP:3260 over TCP"
vm_wait 20 "the iSCSI disk" disk_of iscsi_tcp || vm_fail "no disk for the iSCSI session"
iscsi=$(disk_of iscsi_tcp)
iser=""
if [ -z "$iser_why" ]; then
  if iscsi_login iser 2>"$VM_TMP/iser.err" && vm_wait 20 "the iSER disk" disk_of '*iser*'; then
    iser=$(disk_of '*iser*')
  else
    iser_why="iSER login over rxe failed: $(tr '\n' ' ' <"$VM_TMP/iser.err") (dmesg: $(dmesg | grep -iE 'iser|isert' | tail -n 3 | tr '\n' ' '))"
  fi
fi
echo "iscsi: $iscsi, iser: ${iser:-none ($iser_why)}"

# --- NFS: ext4 on ram1, knfsd over RDMA and TCP, the kernel's proto=rdma mount ---
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 /dev/ram1 || vm_fail "mkfs.ext4 /dev/ram1"
mkdir -p "$KNFSD_EXPORT"
mount /dev/ram1 "$KNFSD_EXPORT" || vm_fail "mount /dev/ram1"
knfsd_start
KNFSD_MOUNT_VERS=4.1 knfsd_mount "$kmnt"

# --- One table --------------------------------------------------------------------
set -- --target "local=dev:/dev/ram0" --target "nvmf-rdma=dev:$nvmf_rdma" \
  --target "nvme-tcp=dev:$nvme_tcp"
allow="--allow-destructive-write /dev/ram0 --allow-destructive-write $nvmf_rdma --allow-destructive-write $nvme_tcp --allow-destructive-write $iscsi"
ratios=nfs-rdma/nvmf-rdma,nvmf-rdma/nvme-tcp,nfs-rdma/nfs-tcp,nfs-rdma/knfs-rdma,nvmf-rdma/local
if [ -n "$iser" ]; then
  set -- "$@" --target "iser=dev:$iser"
  allow="$allow --allow-destructive-write $iser"
  ratios=nfs-rdma/iser,iser/iscsi,$ratios
fi
set -- "$@" --target "iscsi=dev:$iscsi" \
  --target "nfs-rdma=nfs:nfs://$SERVER_IP:20049$KNFSD_EXPORT?proto=rdma&bind=$CLIENT_IP" \
  --target "nfs-tcp=nfs:nfs://$SERVER_IP:2049$KNFSD_EXPORT?proto=tcp&bind=$CLIENT_IP" \
  --target "knfs-rdma=path:$kmnt"
# shellcheck disable=SC2086
timeout 280 nfsrdma-bench compare "$@" $allow --ratios "$ratios" \
  --profiles 4k-randread,128k-read,randrw --size 32m --runtime 1 --ramp 0.2 --verify \
  --server-mem 2g --json "$out.json" --html "" >"$out.txt" 2>"$out.err" ||
  { cat "$out.txt" "$out.err"; vm_fail "nfsrdma-bench compare over the block targets"; }
cat "$out.txt"
[ -z "$iser_why" ] || echo "iser: not in the table: $iser_why"

# Every cell ran and verified: no dash in a figure column, no mismatch.
grep -q '"verify_mismatches": *[1-9]' "$out.json" && vm_fail "a target's data did not verify"
for t in local nvmf-rdma nvme-tcp iscsi nfs-rdma nfs-tcp knfs-rdma ${iser:+iser}; do
  grep -q "\"name\": *\"$t\"" "$out.json" || vm_fail "no target $t in the JSON"
done
if grep -q '"ran": *false' "$out.json"; then vm_fail "a cell did not run (see the table)"; fi
echo "block table: all cells ran, --verify clean"

# The dev engine against fio (the anchor, at its best) on the ramdisk,
# read-only, in this boot: the fastest device here, where the engine's own
# cost shows most. (On the NVMe-oF namespace it costs the boot 40 s more and
# compares the same engine through the same block layer.)
timeout 120 nfsrdma-bench anchor --device /dev/ram0 --runtime 1 >"$VM_TMP/anchor.txt" 2>&1 ||
  { cat "$VM_TMP/anchor.txt"; vm_fail "nfsrdma-bench anchor --device /dev/ram0"; }
cat "$VM_TMP/anchor.txt"
grep -q 'ratios nfsrdma/fio: 4k-randread IOPS' "$VM_TMP/anchor.txt" || vm_fail "no ratios for /dev/ram0"
