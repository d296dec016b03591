#!/bin/sh
# Why: the same client suite over TCP against the same knfsd, so a difference
# between the transports shows up as one test passing and the other failing.
# vm-timeout: 300
set -eu
. "$VM_LIB/vm.sh"
. "$VM_LIB/knfsd.sh"
. "$VM_LIB/client-suite.sh"
CLIENT_SUITE_MAX=4194304 client_suite tcp 2049
