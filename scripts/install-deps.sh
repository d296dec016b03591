#!/usr/bin/env bash
# Installs every build, test and testbed dependency of nfsrdma from Debian 12's
# own packages. Idempotent: packages already present are skipped by apt, and
# `apt-get update` runs only when the package lists are missing or stale.
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: must run as root (apt-get install)" >&2
  exit 1
fi

packages=(
  # build
  build-essential cmake ninja-build pkg-config ccache clang libclang-rt-14-dev
  # the format and tidy checks (scripts/check-format.sh, scripts/check-tidy.sh)
  clang-format clang-tidy
  # libraries (see README "Dependencies")
  libtirpc-dev libnfs-dev libyaml-cpp-dev libboost-program-options-dev
  libibverbs-dev librdmacm-dev liburing-dev libblkid-dev libgtest-dev libgmock-dev libssl-dev
  # real servers and peers used by the tests
  nfs-ganesha nfs-ganesha-vfs libnfs-utils
  # many-client runs: one benchmark client per MPI rank (mpirun, libmpi)
  libopenmpi-dev openmpi-bin
  # headless rendering of the compare report in tests
  chromium
  # RDMA userspace (also copied into the VM testbed's initramfs)
  rdma-core ibverbs-utils ibverbs-providers rdmacm-utils perftest iproute2 kmod fio
  # VM testbed: qemu and initramfs tools; the guest's knfsd, mount.nfs and
  # ps/pkill are copied from these host packages (nothing of them runs on the host)
  qemu-system-x86 cpio zstd busybox-static nfs-kernel-server nfs-common procps
  # ... and its block protocols' host tools (NVMe-oF, iSCSI/iSER initiator, mkfs.ext4)
  nvme-cli open-iscsi e2fsprogs
  # packaging: the man pages from the tools' --help (help2man) and man to show
  # them; the Debian packages (CPack's DEB generator runs dpkg-shlibdeps from
  # dpkg-dev) and lintian to check them
  help2man man-db dpkg-dev lintian
  # the pods' image built and run for real: podman (with runc and catatonit,
  # its pause image's init) and mmdebstrap for a Debian base made locally
  podman runc catatonit mmdebstrap
)
# The Kubernetes manifest validator runs on Node.js; the machines come with
# it (and npm), a bare Debian gets its own.
command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)

# The validator's npm packages (tests/unit/kube-validate, pinned by its
# package-lock.json). `npm ci` deletes and reinstalls node_modules, so it runs
# only when the lock file is newer than npm's record of the last install
# (node_modules/.package-lock.json): with a current node_modules, nothing is
# fetched and no network is needed.
validator_packages() {
  local dir
  dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/unit/kube-validate
  if [[ -d $dir/node_modules/kubernetes-models && $dir/node_modules/.package-lock.json -nt $dir/package-lock.json ]]; then
    return 0
  fi
  echo "install-deps: npm ci in $dir"
  npm ci --prefix "$dir" --no-audit --no-fund
}

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  validator_packages
  exit 0
fi

lists=/var/lib/apt/lists
if [[ -z $(find "$lists" -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -n1) ]]; then
  apt-get update -q
fi
echo "install-deps: installing ${missing[*]}"
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
validator_packages
