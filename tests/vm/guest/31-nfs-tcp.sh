#!/bin/sh
# Why: the same round trip over TCP 2049, the baseline the RDMA transport is
# compared with (and a check that the fixture is not RDMA-only).
# vm-timeout: 180
set -eu
. "$VM_LIB/vm.sh"
. "$VM_LIB/knfsd.sh"
. "$VM_LIB/nfs-roundtrip.sh"
nfs_roundtrip tcp 2049
