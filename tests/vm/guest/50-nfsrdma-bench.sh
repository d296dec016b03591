#!/bin/sh
# Why: the project's own binaries must run in the guest (libraries present,
# no host-only assumptions); later tests drive them against rxe and knfsd.
# vm-timeout: 60
set -eu
. "$VM_LIB/vm.sh"
command -v nfsrdma-bench >/dev/null || vm_skip "nfsrdma-bench is not in the build dir (not built)"
nfsrdma-bench --help || vm_fail "nfsrdma-bench --help exited $?"
