#!/bin/sh
# Why: our client must carry a copy through what a kernel hard mount rides
# through, byte-exact and with exit 0, over RDMA and over TCP:
# - a server restart in the middle of the transfer (rpc.nfsd 0, then started
#   again): it reconnects, reclaims its open in the grace period (or opens
#   again where there is none), writes again the unstable data the restart
#   lost; with one connection and with a trunk of four (nconnect=4), whose
#   connections all go down at once;
# - a silent partition: every packet dropped both ways with the links up
#   (tc netem loss 100% on both veths: a black-holed route, a switch
#   rebooting), longer than the client's timeout: the call that timed out
#   takes its connection for dead, which is replaced once the partition ends,
#   and the calls go again on their slots.
# Each copy says on stderr what the outage cost ("note: ... s without
# service") and --stats prints its account; a hang or an error fails.
# CI runs each case once, with a short partition and timeout; a soak (for
# example 10 restarts at several points of the copy and a 45 s partition at
# the default timeout) sets RESTART_TRIES, RESTART_AT_MIB, PARTITION_SECONDS
# and PARTITION_TIMEOUT_MS (tests/vm/ride-through-soak.sh).
# vm-timeout: 480
set -eu
. "$VM_LIB/vm.sh"
. "$VM_LIB/knfsd.sh"
command -v nfsrdma-client >/dev/null || vm_fail "nfsrdma-client is not in the overlay"
RESTART_TRIES=${RESTART_TRIES:-1}
PARTITION_SECONDS=${PARTITION_SECONDS:-8}
PARTITION_TIMEOUT_MS=${PARTITION_TIMEOUT_MS:-4000}  # "default": the client's own (30 s)
# The copies under a partition are slowed to this rate (client to server),
# so that the partition falls in the middle of the transfer.
PARTITION_RATE=${PARTITION_RATE:-100mbit}
# MiB the server holds of the copy when it restarts, one per trunked try in
# turn, comma-separated (the restart lands in the first writes, the COMMIT
# at 32 MiB, the last writes, ...).
RESTART_AT_MIB=${RESTART_AT_MIB:-0}

clear_netem() {
  tc qdisc del dev "$CLIENT_NETDEV" root 2>/dev/null || true
  tc qdisc del dev "$SERVER_NETDEV" root 2>/dev/null || true
}
trap 'clear_netem; knfsd_stop' EXIT
trap 'exit 143' TERM INT
modprobe sch_netem || vm_fail "modprobe sch_netem (the guest image has no netem)"
knfsd_start
head -c 67108864 /dev/urandom >big.bin
want=$(sha256sum <big.bin | cut -d' ' -f1)

# start_copy PROTO PORT QUERY NAME: a 64 MiB copy in the background (cp_pid),
# to $KNFSD_EXPORT/NAME.bin, once it has begun writing there.
start_copy() {
  dst="$KNFSD_EXPORT/$4.bin"
  rm -f "$dst"
  url="nfs://$SERVER_IP:$2$KNFSD_EXPORT/$4.bin?proto=$1&bind=$CLIENT_IP$3"
  timeout 300 nfsrdma-client --stats cp big.bin "$url" >cp.out 2>cp.err &
  cp_pid=$!
  vm_wait 60 "the $4 copy to start writing" test -s "$dst" || true
}

# finish_copy NAME WHAT [MIB]: the copy exits 0, the server holds the same
# bytes, and the client said what the outage cost; prints its account.
finish_copy() {
  status=0
  wait "$cp_pid" || status=$?
  [ "$status" -ne 124 ] || { cat cp.err; vm_fail "$1 hung across $2"; }
  [ "$status" -eq 0 ] || { cat cp.err; vm_fail "$1 failed across $2 (exit $status)"; }
  got=$(sha256sum <"$dst" | cut -d' ' -f1)
  [ "$got" = "$want" ] || vm_fail "$1 reported success across $2, but the server has sha256 $got, expected $want"
  if ! grep -q '^nfsrdma-client: note: .* s without service)$' cp.err; then
    # Restarted at the very end (MIB given): the copy may have ended before
    # the server stopped. Only a copy that saw no outage at all is a miss.
    if [ "${3:-0}" != 0 ] && grep -q '^recovery: outages=0 ' cp.err; then
      echo "NOTE: $1 ended before $2 took effect: no outage this try"
      missed=$((missed + 1))
      return 0
    fi
    cat cp.err
    vm_fail "$1 did not say what $2 cost"
  fi
  echo "$1 across $2: completed and verified"
  sed -n 's/^nfsrdma-client: note: /  note: /p; s/^recovery: /  recovery: /p; s/^session: /  session: /p' cp.err
}

# restart_during_copy PROTO PORT QUERY NAME [MIB]: one copy across one
# server restart, once the server holds MIB MiB of it.
restart_during_copy() {
  start_copy "$@"
  if [ "${5:-0}" != 0 ]; then
    vm_wait 60 "$4: $5 MiB on the server" sh -c "[ \$(stat -c %s '$dst') -ge $(($5 * 1048576)) ]" || true
  fi
  if ! kill -0 "$cp_pid" 2>/dev/null; then
    [ "${5:-0}" != 0 ] || vm_fail "$4: the copy ended before the server could be restarted"
    wait "$cp_pid" || vm_fail "$4: the copy failed without a restart"
    echo "NOTE: $4: the copy ended before it reached $5 MiB on the server: no restart this try"
    missed=$((missed + 1))
    return 0
  fi
  rpc.nfsd 0 || vm_fail "rpc.nfsd 0"
  echo "$4: server stopped mid-transfer ($(stat -c %s "$dst" 2>/dev/null || echo 0) bytes on disk)"
  sleep 1
  rpc.nfsd -N 3 -U -G 10 -L 10 --rdma=20049 8 || vm_fail "restarting rpc.nfsd"
  grep -q '^rdma 20049$' /proc/fs/nfsd/portlist || echo 'rdma 20049' >/proc/fs/nfsd/portlist
  finish_copy "the $4 copy" "a server restart" "${5:-}"
}

# partition_during_copy PROTO PORT NAME: one copy across a silent partition
# longer than the client's timeout.
partition_during_copy() {
  query=""
  [ "$PARTITION_TIMEOUT_MS" = default ] || query="&timeout=$PARTITION_TIMEOUT_MS"
  tc qdisc add dev "$CLIENT_NETDEV" root netem rate "$PARTITION_RATE" || vm_fail "tc netem rate on $CLIENT_NETDEV"
  start_copy "$1" "$2" "$query" "$3"
  tc qdisc change dev "$CLIENT_NETDEV" root netem rate "$PARTITION_RATE" loss 100% || vm_fail "tc netem loss on $CLIENT_NETDEV"
  tc qdisc add dev "$SERVER_NETDEV" root netem loss 100% || vm_fail "tc netem loss on $SERVER_NETDEV"
  echo "$3: every packet dropped both ways for $PARTITION_SECONDS s, links up ($(stat -c %s "$dst" 2>/dev/null || echo 0) bytes on disk; timeout ${PARTITION_TIMEOUT_MS} ms)"
  ip -br link show "$CLIENT_NETDEV" | grep -q 'UP' || vm_fail "$CLIENT_NETDEV went down"
  sleep "$PARTITION_SECONDS"
  clear_netem
  tc qdisc add dev "$CLIENT_NETDEV" root netem rate "$PARTITION_RATE" || vm_fail "tc netem rate on $CLIENT_NETDEV"
  finish_copy "the $3 copy" "a ${PARTITION_SECONDS} s silent partition"
  clear_netem
}

missed=0
restart_during_copy rdma 20049 "" restart-rdma
restart_during_copy tcp 2049 "" restart-tcp
try=1
while [ "$try" -le "$RESTART_TRIES" ]; do
  at=$(echo "$RESTART_AT_MIB" | awk -F, -v t="$try" '{ print $((t - 1) % NF + 1) }')
  echo "trunked restarts: try $try of $RESTART_TRIES, at $at MiB of the copy"
  restart_during_copy rdma 20049 "&nconnect=4" restart-rdma-nconnect4 "$at"
  restart_during_copy tcp 2049 "&nconnect=4" restart-tcp-nconnect4 "$at"
  try=$((try + 1))
done
partition_during_copy rdma 20049 partition-rdma
partition_during_copy tcp 2049 partition-tcp
echo "ride-through: $((2 + 2 * RESTART_TRIES - missed)) restarts and 2 partitions, every copy verified"
[ "$missed" -eq 0 ] || echo "NOTE: $missed trunked copies ended before their restart"
