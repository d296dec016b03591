#!/bin/sh
# Why: proves the kernel NFS client and knfsd talk NFSv4.2 over RPC-over-RDMA
# (rxe1 -> rxe0, port 20049) and move data byte-exact both ways.
# vm-timeout: 180
set -eu
. "$VM_LIB/vm.sh"
. "$VM_LIB/knfsd.sh"
. "$VM_LIB/nfs-roundtrip.sh"
nfs_roundtrip rdma 20049
