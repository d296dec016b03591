#!/bin/sh
# Why: our userspace NFSv4.1 client over RPC-over-RDMA (rxe1 -> rxe0, port
# 20049) against the kernel's svcrdma must pass the same functional checks as
# over TCP: byte-exact round trips to 64 MiB, listing, rename, remove, errors.
# vm-timeout: 420
set -eu
. "$VM_LIB/vm.sh"
. "$VM_LIB/knfsd.sh"
. "$VM_LIB/client-suite.sh"
CLIENT_SUITE_MAX=67108864 client_suite rdma 20049
