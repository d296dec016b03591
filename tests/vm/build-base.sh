#!/usr/bin/env bash
# Why: the guest needs RDMA userspace, perftest, the kernel NFS server and client
# tools, fio and the kernel modules for soft-RoCE and NFS/RDMA, but no disk
# image or debootstrap. The host already has those Debian 12 binaries, so this
# copies them (with their ldd libraries, the ELF loader and what they dlopen)
# and the needed modules into a usr-merged tree, packs it as cpio newc + zstd,
# and caches it. The cache key hashes the package versions, the kernel package
# and this script, so the image is rebuilt only when one of those changes.
#
# Usage: build-base.sh KERNEL_TREE    (the path fetch-kernel.sh printed)
# Output (stdout): the path of the cached base image (.cpio.zst).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib/common.sh
source "$here/lib/common.sh"

ktree=${1:?usage: build-base.sh KERNEL_TREE}
[[ -f $ktree/.complete ]] || vm_die "build-base: $ktree is not a kernel tree from fetch-kernel.sh"
release=$(<"$ktree/kernel.release")

# Host packages whose programs go into the guest. The testbed notes list the
# RDMA/NFS ones; the rest is the plumbing the guest scripts use.
packages=(
  dash coreutils util-linux mount grep sed mawk findutils procps diffutils libc-bin
  busybox-static kmod iproute2
  rdma-core ibverbs-utils ibverbs-providers rdmacm-utils perftest
  nfs-kernel-server nfs-common fio
  # many-client runs: orterun (mpirun) and orted start the ranks
  openmpi-bin
  # block protocols next to NFS: the NVMe-oF host (nvme connect), the iSCSI
  # and iSER initiator (iscsid, iscsiadm), mkfs.ext4 for the export's ramdisk
  nvme-cli open-iscsi e2fsprogs
  # 71: a slow disk under the export (dm-delay), so one nfsd thread bounds
  dmsetup
)
# Kernel modules loaded by the guest's /init (their dependencies come along).
modules=(veth dummy rdma_rxe ib_uverbs rdma_ucm rpcrdma nfsd nfsv4 nfs sunrpc crc32
  # loaded by 70-block: the ramdisk, NVMe-oF target and host over RDMA and
  # TCP, LIO with its iSCSI and iSER fabrics, the initiators, the export's fs
  brd configfs nvmet nvmet-rdma nvmet-tcp nvme-rdma nvme-tcp target_core_iblock iscsi_target_mod
  ib_isert ib_iser iscsi_tcp sd_mod ext4
  # loaded by 63: netem drops every packet on the veths (a silent partition);
  # 71: netem's 1% loss, and dm-delay's slow disk
  sch_netem dm-delay)

versions=$(dpkg-query -W -f='${Package} ${Version} ${Status}\n' "${packages[@]}" 2>&1) ||
  vm_missing "host packages for the guest image are missing: $(grep -v 'install ok installed' <<<"$versions" | tr '\n' ' ')"
if grep -qv 'install ok installed' <<<"$versions"; then
  vm_missing "host packages for the guest image are not installed: $(grep -v 'install ok installed' <<<"$versions" | cut -d' ' -f1 | tr '\n' ' ')"
fi

key=$( {
  printf '%s\n' "$versions" "${modules[*]}"
  cat "$ktree/deb.sha256" "${BASH_SOURCE[0]}"
} | sha256sum | cut -c1-20)
cache=$(vm_cache_dir)
out=$cache/base/base-$key.cpio.zst
if [[ -f $out ]]; then
  printf '%s\n' "$out"
  exit 0
fi

vm_log "build-base: assembling the guest base image (key $key)"
mkdir -p "$cache/base"
tree=$(mktemp -d "$cache/base/tree.XXXXXX")
trap 'rm -rf "$tree"' EXIT

# usr-merged layout: the top-level directories are links into /usr.
mkdir -p "$tree"/usr/{bin,sbin,lib,lib64} "$tree"/{etc,proc,sys,dev,tmp,run,mnt,root,var/lib/nfs}
for d in bin sbin lib lib64; do ln -s "usr/$d" "$tree/$d"; done

# Few forks per file: on a loaded CI host every process start costs.
declare -A copied=() made=()
elfs=()
# put SRC: copies a host file (dereferenced) to its usr-merged guest path;
# remembers ELF objects so their libraries are resolved afterwards.
put() {
  local src=$1 dst magic
  case $src in
    /bin/* | /sbin/* | /lib/* | /lib64/*) dst=/usr$src ;;
    *) dst=$src ;;
  esac
  [[ -n ${copied[$dst]:-} ]] && return 0
  copied[$dst]=1
  if [[ -z ${made[${dst%/*}]:-} ]]; then
    mkdir -p "$tree${dst%/*}"
    made[${dst%/*}]=1
  fi
  cp -L "$src" "$tree$dst"
  LC_ALL=C IFS= read -r -n 4 magic <"$src" || true
  [[ $magic == $'\x7f'ELF ]] && elfs+=("$src")
  return 0
}

# 1. Every program of the packages: ELF binaries and /bin/sh scripts (no
#    python/perl in the guest, so those would not run anyway).
for p in "${packages[@]}"; do
  while IFS= read -r f; do
    case $f in /bin/* | /sbin/* | /usr/bin/* | /usr/sbin/*) ;; *) continue ;; esac
    [[ -f $f ]] || continue
    LC_ALL=C IFS= read -r -n 9 first <"$f" || true
    case $first in
      $'\x7f'ELF* | '#!/bin/sh') put "$f" ;;
    esac
  done < <(dpkg -L "$p")
done
# Names Debian provides through update-alternatives or maintainer scripts,
# which dpkg -L does not list.
ln -sf dash "$tree/usr/bin/sh"
ln -sf mawk "$tree/usr/bin/awk"

# 2. What is dlopen()ed rather than linked: the soft-RoCE verbs provider with
#    its driver file, and the NSS files module.
shopt -s nullglob
rxe=(/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so)
((${#rxe[@]})) || vm_missing "no soft-RoCE provider librxe-rdmav*.so (package ibverbs-providers)"
for f in "${rxe[@]}" /usr/lib/x86_64-linux-gnu/libnss_files.so.2; do put "$f"; done
mkdir -p "$tree/etc/libibverbs.d"
cp /etc/libibverbs.d/rxe.driver "$tree/etc/libibverbs.d/"
# OpenMPI's components (and PMIx's) are dlopen()ed from their directories,
# and its messages come from help files: all of them, so that no component
# fails to load with a warning the test would have to ignore.
for f in /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/*.so /usr/lib/x86_64-linux-gnu/pmix2/lib/pmix/*.so; do
  put "$f"
done
for d in /usr/share/openmpi /usr/share/pmix /etc/openmpi; do
  [[ -d $d ]] || continue
  mkdir -p "$tree$d"
  cp -rL "$d/." "$tree$d/"
done

# 3. Libraries of every ELF object (ldd lists them transitively, so one pass
#    over the programs suffices) and the loader. mawk has no \s: match
#    "name => /path (addr)" and "/path (addr)" with explicit [ \t].
while IFS= read -r lib; do
  [[ -n $lib && -e $lib ]] && put "$lib"
done < <(printf '%s\0' "${elfs[@]}" | xargs -0 -n 64 ldd 2>/dev/null | awk '
    /=>[ \t]*\// { sub(/.*=>[ \t]*/, ""); sub(/[ \t]+\(0x.*/, ""); print; next }
    /^[ \t]*\/.*\(0x/ { sub(/^[ \t]*/, ""); sub(/[ \t]+\(0x.*/, ""); print }' | sort -u)
[[ -x $tree/usr/lib64/ld-linux-x86-64.so.2 ]] || vm_die "build-base: the ELF loader was not copied (ldd parsing)"

# 4. Configuration the tools read.
for f in /etc/netconfig /etc/protocols /etc/services /etc/rpc /etc/nfs.conf /etc/idmapd.conf; do
  [[ -f $f ]] && cp "$f" "$tree/etc/"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$tree/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$tree/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files\nservices: files\nprotocols: files\nrpc: files\n' >"$tree/etc/nsswitch.conf"
printf '127.0.0.1 localhost\n198.18.0.1 server\n198.18.0.2 client\n' >"$tree/etc/hosts"
printf 'nfsrdma-vm\n' >"$tree/etc/hostname"
: >"$tree/etc/fstab"
: >"$tree/etc/exports"

# 5. Kernel modules with their dependencies, then depmod on the guest tree.
mdir=lib/modules/$release
mkdir -p "$tree/usr/$mdir"
for m in "${modules[@]}"; do
  modprobe -d "$ktree" -S "$release" --show-depends "$m" ||
    vm_die "build-base: module $m not found in $release"
done | awk '$1 == "insmod" { print $2 }' | sort -u | while IFS= read -r ko; do
  rel=${ko#"$ktree"/}
  mkdir -p "$tree/usr/$(dirname "$rel")"
  cp "$ko" "$tree/usr/$rel"
done
for f in modules.order modules.builtin modules.builtin.modinfo; do
  [[ -f $ktree/$mdir/$f ]] && cp "$ktree/$mdir/$f" "$tree/usr/$mdir/"
done
depmod -b "$tree" "$release"

# 6. Pack: sorted names, root-owned, so the same inputs give the same archive.
(cd "$tree" && find . -mindepth 1 -print0 | LC_ALL=C sort -z |
  cpio --null --create --format=newc --owner=0:0 --reproducible --quiet) |
  zstd -q -T0 -12 >"$out.tmp"
mv "$out.tmp" "$out"
# Keep only the three newest base images.
find "$cache/base" -name 'base-*.cpio.zst' -printf '%T@ %p\n' | sort -rn | tail -n +4 | cut -d' ' -f2- | xargs -r rm -f
vm_log "build-base: $(du -h "$out" | cut -f1) in $out"
printf '%s\n' "$out"
