#!/usr/bin/env bash
# Why: the VM testbed needs a kernel with rdma_rxe, rpcrdma and nfsd, and the
# host must not get a kernel installed nor its apt configuration changed. This
# downloads Debian's bookworm-backports kernel image package (6.12: its rdma_rxe
# survives NFS/RDMA, 6.1's does not, see tests/vm/README.md) with a private
# apt state under the cache, or takes a given .deb, unpacks it with
# dpkg-deb -x, runs depmod, and prints the unpacked tree's path. The tree
# is keyed by the .deb's sha256, so a given package is unpacked once.
#
# Usage: fetch-kernel.sh [--deb FILE] [--refresh]
#   --deb FILE   use this kernel image .deb (also: NFSRDMA_VM_KERNEL_DEB)
#   --refresh    ask the mirror for the newest package even if one is cached
#                (also: NFSRDMA_VM_KERNEL_REFRESH=1); otherwise the newest
#                cached .deb is reused, so reruns are stable and offline-safe.
# Output (stdout): the kernel tree, holding vmlinuz, kernel.release, deb.sha256
# and lib/modules/<release>/. Exit 77 (skip) when no kernel can be had, or 1
# when NFSRDMA_REQUIRE_REAL=1.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib/common.sh
source "$here/lib/common.sh"

deb=${NFSRDMA_VM_KERNEL_DEB:-}
refresh=${NFSRDMA_VM_KERNEL_REFRESH:-0}
suite=${NFSRDMA_VM_KERNEL_SUITE:-bookworm-backports}
meta=${NFSRDMA_VM_KERNEL_META:-linux-image-amd64}
while (($#)); do
  case $1 in
    --deb) deb=${2:?--deb needs a file}; shift 2 ;;
    --refresh) refresh=1; shift ;;
    *) vm_die "fetch-kernel: unknown argument $1" ;;
  esac
done

cache=$(vm_cache_dir)
debs=$cache/debs
mkdir -p "$debs"

# The mirror comes from the host's own apt sources: the deb822 stanza whose
# Suites carry plain "bookworm" (or a one-line "deb URI bookworm main" entry),
# so no mirror host name lives in the repository. NFSRDMA_VM_APT_SOURCES
# points at another file of either format.
sources_file() {
  if [[ -n ${NFSRDMA_VM_APT_SOURCES:-} ]]; then
    printf '%s\n' "$NFSRDMA_VM_APT_SOURCES"
  elif [[ -r /etc/apt/sources.list.d/debian.sources ]]; then
    printf '%s\n' /etc/apt/sources.list.d/debian.sources
  else
    printf '%s\n' /etc/apt/sources.list
  fi
}

host_mirror() {
  local src
  src=$(sources_file)
  [[ -r $src ]] || return 1
  awk '
    /^deb[ \t]/ { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i ~ /:\/\//) { if ($(i + 1) == "bookworm") { print $i; exit } break } }
    /^[ \t]*$/ { if (uri != "" && main) { print uri; found = 1; exit } uri = ""; main = 0; next }
    /^URIs:/ { uri = $2 }
    /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == "bookworm") main = 1 }
    END { if (!found && uri != "" && main) print uri }
  ' "$src" | head -n1
}

host_keyring() {
  awk '/^Signed-By:/ { print $2; exit }' "$(sources_file)" 2>/dev/null
}

# Newest cached kernel image .deb, by Debian version order; empty if none.
newest_cached() {
  local best="" best_ver="" f v
  for f in "$debs"/linux-image-*.deb; do
    [[ -f $f ]] || continue
    v=$(dpkg-deb -f "$f" Version 2>/dev/null) || continue
    if [[ -z $best ]] || dpkg --compare-versions "$v" gt "$best_ver"; then
      best=$f best_ver=$v
    fi
  done
  printf '%s\n' "$best"
}

# Private apt: own sources list, lists, cache and an empty dpkg status, so the
# host's package state and configuration are read at most, never written.
download_latest() {
  local apt=$cache/apt mirror keyring
  mirror=$(host_mirror) || true
  [[ -n $mirror ]] || { vm_log "no bookworm mirror in $(sources_file)"; return 1; }
  keyring=$(host_keyring)
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/empty.d"
  : >"$apt/status"
  printf 'deb [signed-by=%s] %s %s main\n' \
    "${keyring:-/usr/share/keyrings/debian-archive-keyring.gpg}" "$mirror" "$suite" >"$apt/sources.list"
  local opts=(
    -o "Dir::Etc::SourceList=$apt/sources.list"
    -o "Dir::Etc::SourceParts=$apt/empty.d"
    -o "Dir::Etc::Preferences=/dev/null"
    -o "Dir::Etc::PreferencesParts=$apt/empty.d"
    -o "Dir::State::Lists=$apt/lists"
    -o "Dir::State::status=$apt/status"
    -o "Dir::Cache=$apt/cache"
    -o "Acquire::Languages=none"
    -o "APT::Sandbox::User=root"
  )
  vm_log "fetch-kernel: apt-get update ($suite, private state in $apt)"
  # apt's own chatter goes to a log; a failure is reported by the caller.
  timeout 300 apt-get "${opts[@]}" -q -q update >"$apt/update.log" 2>&1 || return 1
  # The metapackage depends on exactly one versioned image package.
  local pkg
  pkg=$(apt-cache "${opts[@]}" show "$meta" 2>/dev/null |
    awk -F': ' '/^Depends:/ { split($2, d, /[ ,]/); print d[1]; exit }')
  [[ $pkg == linux-image-* ]] || { vm_log "cannot resolve $meta in $suite (apt log: $apt/update.log)"; return 1; }
  vm_log "fetch-kernel: downloading $pkg"
  (cd "$debs" && timeout 900 apt-get "${opts[@]}" -q -q download "$pkg" >&2) || return 1
  ls -t "$debs/${pkg}_"*.deb 2>/dev/null | head -n1
}

if [[ -n $deb ]]; then
  [[ -f $deb ]] || vm_die "fetch-kernel: given kernel .deb $deb does not exist"
else
  [[ $refresh == 1 ]] || deb=$(newest_cached)
  if [[ -z $deb ]]; then
    deb=$(download_latest) || deb=""
    [[ -n $deb ]] || deb=$(newest_cached)
    [[ -n $deb ]] || vm_missing "no kernel: could not download $meta from $suite and none cached in $debs"
  fi
fi

sha=$(sha256sum "$deb" | cut -c1-64)
tree=$cache/kernel/${sha:0:20}
if [[ ! -f $tree/.complete ]]; then
  vm_log "fetch-kernel: unpacking $(basename "$deb")"
  rm -rf "$tree" "$tree.tmp"
  mkdir -p "$tree.tmp"
  dpkg-deb -x "$deb" "$tree.tmp/root"
  # Newer packages ship usr/lib/modules; depmod -b looks in lib/modules.
  if [[ ! -d $tree.tmp/root/lib/modules && -d $tree.tmp/root/usr/lib/modules ]]; then
    mkdir -p "$tree.tmp/root/lib"
    mv "$tree.tmp/root/usr/lib/modules" "$tree.tmp/root/lib/modules"
  fi
  releases=("$tree.tmp/root/lib/modules"/*)
  ((${#releases[@]} == 1)) && [[ -d ${releases[0]} ]] || vm_die "fetch-kernel: expected one lib/modules/<release> in $deb"
  release=$(basename "${releases[0]}")
  [[ -f $tree.tmp/root/boot/vmlinuz-$release ]] || vm_die "fetch-kernel: no boot/vmlinuz-$release in $deb"
  depmod -b "$tree.tmp/root" "$release"
  mv "$tree.tmp/root/boot/vmlinuz-$release" "$tree.tmp/vmlinuz"
  mv "$tree.tmp/root/lib" "$tree.tmp/lib"
  rm -rf "$tree.tmp/root"
  printf '%s\n' "$release" >"$tree.tmp/kernel.release"
  printf '%s  %s\n' "$sha" "$(basename "$deb")" >"$tree.tmp/deb.sha256"
  touch "$tree.tmp/.complete"
  mv "$tree.tmp" "$tree"
fi
printf '%s\n' "$tree"
