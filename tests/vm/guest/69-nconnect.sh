#!/bin/sh
# Why: session trunking (nconnect=N: N TCP connections or N RDMA QPs bound to
# one NFSv4.1 session) must move the same bytes as one connection, must look
# like ONE client to the server (one EXCHANGE_ID owner, every connection bound
# to its session), and must actually spread the calls over its connections;
# and it is only worth having if it keeps up with the kernel client's own
# nconnect=4 on the same export in the same boot. Over RDMA and TCP: byte-exact
# round trips checked through the kernel's mount, concurrent random writes read
# back, one nfsrdma: client in /proc/fs/nfsd/clients while 4 connections are up,
# every connection's calls= non-zero; then 4 KiB random reads at QD32 and 1 MiB
# sequential reads at QD8, ours (nfsrdma-bench anchor) against the kernel's
# (fio on a vers=4.1,proto=rdma,nconnect=4 mount), alternated three times,
# with the ratios of the medians.
# vm-timeout: 360
set -eu
. "$VM_LIB/vm.sh"
. "$VM_LIB/knfsd.sh"
command -v nfsrdma-bench >/dev/null || vm_fail "nfsrdma-bench is not in the overlay"
command -v nfsrdma-client >/dev/null || vm_fail "nfsrdma-client is not in the overlay"
mnt=$VM_TMP/kmnt
bg_pid=""
trap 'if [ -n "$bg_pid" ]; then kill "$bg_pid" 2>/dev/null || true; fi; umount -f "$mnt" 2>/dev/null || true; knfsd_stop' EXIT
trap 'exit 143' TERM INT
knfsd_start
nc=4
rdma_base="nfs://$SERVER_IP:20049$KNFSD_EXPORT"
tcp_base="nfs://$SERVER_IP:2049$KNFSD_EXPORT"
rdma_q="?proto=rdma&bind=$CLIENT_IP&nconnect=$nc&timeout=30000"
tcp_q="?proto=tcp&bind=$CLIENT_IP&nconnect=$nc&timeout=30000"

# The kernel client with nconnect=4 over RDMA, NFSv4.1 (the version our
# client speaks): the cross-client checks read through it, the comparison
# runs fio on it.
KNFSD_MOUNT_VERS=4.1 KNFSD_MOUNT_OPTS="nconnect=$nc" knfsd_mount "$mnt"
grep " $mnt " /proc/mounts | grep -q "nconnect=$nc" ||
  { grep " $mnt " /proc/mounts; vm_fail "the kernel mount does not show nconnect=$nc"; }
echo "kernel mount: $(grep " $mnt " /proc/mounts | cut -d' ' -f4)"

# our_clients: how many knfsd clients carry our EXCHANGE_ID owner prefix.
our_clients() {
  grep -l 'nfsrdma:' /proc/fs/nfsd/clients/*/info 2>/dev/null | wc -l
}
no_clients() { [ "$(our_clients)" -eq 0 ]; }
# our_connections PROTO PORT: our connections to the server's PORT, counted
# on the client side (TCP: established sockets; RDMA: user cm_ids).
our_connections() {
  if [ "$1" = tcp ]; then
    ss -Htn state established "( dport = :$2 )" | wc -l
  else
    # A user process's cm_id shows its pid; the kernel client's and knfsd's do not.
    rdma resource show cm_id 2>/dev/null | grep ' pid ' | grep -Ec "dst-addr [0-9.]+:$2( |\$)" || true
  fi
}
connections_up() { [ "$(our_connections "$1" "$2")" -ge "$nc" ]; }

# snapshot_clients FILE: writes the info of every knfsd client named
# nfsrdma: to FILE and prints how many there are (one pass, so a client that
# ends meanwhile is either wholly in it or not).
snapshot_clients() {
  : >"$1"
  _sc_n=0
  for _sc_f in /proc/fs/nfsd/clients/*/info; do
    _sc_info=$(cat "$_sc_f" 2>/dev/null) || continue
    case $_sc_info in *nfsrdma:*) ;; *) continue ;; esac
    _sc_n=$((_sc_n + 1))
    { printf '  %s:\n' "$_sc_f"; printf '%s\n' "$_sc_info" | sed 's/^/    /'; } >>"$1"
  done
  echo "$_sc_n"
}

# one_client PROTO PORT BASE QUERY: a file benchmark with one job runs a few
# seconds in the background; sampled while its nc connections are up, knfsd
# knows exactly one client of ours (the benchmark lays its file out with a
# client of its own first, then runs with another: one at a time). The info
# of that client is printed.
one_client() {
  vm_wait 20 "no nfsrdma: client left from before" no_clients ||
    { cat /proc/fs/nfsd/clients/*/info; vm_fail "a client of ours is still known to knfsd before the $1 check"; }
  timeout 120 nfsrdma-bench file --target "nfs:$3$4" --profile 4k-randread --iodepth 16 --size 1m \
    --runtime 8 --ramp 0 >"one-$1.txt" 2>&1 &
  bg_pid=$!
  vm_wait 60 "$nc $1 connections of nfsrdma-bench" connections_up "$1" "$2" ||
    { cat "one-$1.txt"; vm_fail "nfsrdma-bench with nconnect=$nc did not open $nc $1 connections"; }
  # Up to 10 samples, 0.5 s apart, while the benchmark runs.
  seen=0
  most=0
  conns=0
  i=0
  while [ "$i" -lt 10 ] && kill -0 "$bg_pid" 2>/dev/null; do
    got=$(snapshot_clients "clients-$1.now")
    up=$(our_connections "$1" "$2")
    [ "$got" -le "$most" ] || most=$got
    if [ "$got" -eq 1 ] && [ "$up" -ge "$nc" ]; then
      seen=$((seen + 1))
      conns=$up
      cp "clients-$1.now" "clients-$1.txt"
    fi
    [ "$got" -le 1 ] || { cat "clients-$1.now"; vm_fail "knfsd knows $got clients of ours at once over $1 with nconnect=$nc, expected 1"; }
    i=$((i + 1))
    sleep 0.5
  done
  [ "$seen" -gt 0 ] || { cat "one-$1.txt"; vm_fail "never saw one nfsrdma: client with $nc $1 connections up"; }
  echo "$1 nconnect=$nc: $conns connections up, exactly 1 knfsd client named nfsrdma: ($seen of $i samples; never more than $most)"
  cat "clients-$1.txt"
  status=0
  wait "$bg_pid" || status=$?
  bg_pid=""
  [ "$status" -eq 0 ] || { cat "one-$1.txt"; vm_fail "nfsrdma-bench file over $1 with nconnect=$nc (exit $status)"; }
  vm_wait 20 "the $1 client to destroy its client id" no_clients ||
    echo "NOTE: knfsd still lists a client of ours after the $1 benchmark ended"
}

# connection_stats FILE WHAT: --stats printed a line per connection, nc of
# them, each with calls > 0 and up=yes.
connection_stats() {
  grep '^connection [0-9]*: ' "$1" || true
  lines=$(grep -c '^connection [0-9]*: ' "$1" || true)
  [ "$lines" -eq "$nc" ] || { cat "$1"; vm_fail "$2: --stats shows $lines connection lines, expected $nc"; }
  awk -v n="$nc" '
    /^connection [0-9]+: / {
      idx = $2; sub(":", "", idx); seen[idx] = 1
      for (i = 3; i <= NF; i++) if ($i ~ /^calls=/) { v = $i; sub("calls=", "", v); if (v + 0 == 0) bad = 1 }
      if ($NF != "up=yes") bad = 1
    }
    END { for (i = 0; i < n; i++) if (!(i in seen)) bad = 1; exit bad }' "$1" ||
    vm_fail "$2: a connection has calls=0 or is not up (lines above)"
}

sha() { sha256sum <"$1" | cut -d' ' -f1; }

# round_trips PROTO BASE QUERY: a few MiB each way through our client with
# nconnect, compared through the kernel's mount; then 4 jobs of concurrent
# random writes, read back and verified.
round_trips() {
  head -c 6291463 /dev/urandom >"up-$1.bin"
  timeout 120 nfsrdma-client --stats cp "up-$1.bin" "$2/up-$1.bin$3" 2>"up-$1.stats" ||
    { cat "up-$1.stats"; vm_fail "nfsrdma-client cp to the server over $1 with nconnect=$nc"; }
  [ "$(sha "$mnt/up-$1.bin")" = "$(sha "up-$1.bin")" ] ||
    vm_fail "file written by nfsrdma over $1 (nconnect=$nc) differs when read through the kernel's mount"
  echo "$1 cp to the server (6 MiB), per connection:"
  connection_stats "up-$1.stats" "cp to the server over $1"
  head -c 4194319 /dev/urandom >"$mnt/down-$1.bin"
  sync
  timeout 120 nfsrdma-client --stats cp "$2/down-$1.bin$3" "down-$1.bin" 2>"down-$1.stats" ||
    { cat "down-$1.stats"; vm_fail "nfsrdma-client cp from the server over $1 with nconnect=$nc"; }
  [ "$(sha "down-$1.bin")" = "$(sha "$mnt/down-$1.bin")" ] ||
    vm_fail "file written through the kernel's mount differs when read by nfsrdma over $1 (nconnect=$nc)"
  echo "$1 cp from the server (4 MiB), per connection:"
  connection_stats "down-$1.stats" "cp from the server over $1"
  echo "cross-client over $1 nconnect=$nc: nfsrdma -> kernel and kernel -> nfsrdma byte-exact"
  rm -f "up-$1.bin" "down-$1.bin" "$mnt/up-$1.bin" "$mnt/down-$1.bin"
  # 4 jobs x 16 concurrent 4 KiB writes at random offsets on one client the
  # jobs share (one session, the URL's 4 connections), every byte read back
  # and checked; every connection of that client carried calls.
  timeout 150 nfsrdma-bench file --target "nfs:$2$3" --profile 4k-randwrite --numjobs 4 --client shared \
    --iodepth 16 --size 2m --runtime 2 --ramp 0 --verify >"randwrite-$1.txt" 2>&1 ||
    { cat "randwrite-$1.txt"; vm_fail "concurrent random writes over $1 with nconnect=$nc"; }
  grep -q ' 0 mismatches' "randwrite-$1.txt" ||
    { cat "randwrite-$1.txt"; vm_fail "random writes over $1 with nconnect=$nc did not verify"; }
  grep -q "^  client: shared (1 session, $nc connections)" "randwrite-$1.txt" ||
    { cat "randwrite-$1.txt"; vm_fail "the benchmark's jobs over $1 did not share one client of $nc connections"; }
  idle=$(grep -c '^    connection [0-9]*: .* calls=0 ' "randwrite-$1.txt" || true)
  [ "$idle" -eq 0 ] || { cat "randwrite-$1.txt"; vm_fail "$idle connection(s) of the shared client over $1 carried no calls"; }
  echo "4 jobs x 16 concurrent random 4 KiB writes over $1 on one shared client ($nc connections): verified;" \
    "$(grep -m1 'write: IOPS=' "randwrite-$1.txt" | sed 's/^ *//')"
  grep '^    connection [0-9]*: ' "randwrite-$1.txt"
}

one_client rdma 20049 "$rdma_base" "$rdma_q"
# numa=auto over RDMA: each connection's completion thread goes to its
# device's NUMA node; the guest's rxe on a virtio NIC has none, and every
# connection's stats line must say so rather than stay silent.
timeout 60 nfsrdma-client --stats ls "$rdma_base$rdma_q&numa=auto" >numa.txt 2>&1 ||
  { cat numa.txt; vm_fail "ls over rdma with numa=auto"; }
placed=$(grep -c ' numa=' numa.txt || true)
[ "$placed" -eq "$nc" ] || { cat numa.txt; vm_fail "numa=auto: $placed of $nc connections say where they run"; }
echo "numa=auto over rdma:$(grep -m1 -o ' numa=.*' numa.txt)"
one_client tcp 2049 "$tcp_base" "$tcp_q"
round_trips rdma "$rdma_base" "$rdma_q"
round_trips tcp "$tcp_base" "$tcp_q"

# Ours against the kernel, both with nconnect=4 over RDMA, on the smaller
# file of this test. A soft-RoCE guest's figures swing by a fifth from one run
# to the next, so the two run alternately three times (ours, kernel, ours,
# ...) and each side's median is compared.
runtime=4
size_mib=32
fio_run() {
  timeout 120 fio --name="$1" --filename="$mnt/fio.dat" --size="${size_mib}m" --rw="$2" --bs="$3" --iodepth="$4" \
    --ioengine=libaio --direct=1 --time_based --runtime="$runtime" --minimal >"$1.fio" 2>&1 ||
    { cat "$1.fio"; vm_fail "fio $1"; }
}
# median A B C
median() { printf '%s\n' "$@" | sort -g | sed -n 2p; }
ours_4k="" ours_1m="" kern_4k="" kern_1m=""
for round in 1 2 3; do
  timeout 240 nfsrdma-bench anchor --only nfsrdma --url "$rdma_base$rdma_q" --size-mib "$size_mib" \
    --runtime "$runtime" --json ours.json >ours.txt 2>&1 || { cat ours.txt; vm_fail "nfsrdma-bench anchor over rdma nconnect=$nc"; }
  if [ "$round" -eq 1 ]; then
    cat ours.txt
    # The session's slots must cover the deepest workload (knfsd sizes them
    # by the cached reply size we ask for: 8 KiB asked got 30 of 32).
    grep -q '^ slots  : asked' ours.txt || vm_fail "the anchor did not print its session slots"
    if grep -q '^ note   : the server granted fewer session slots' ours.txt; then
      vm_fail "knfsd granted fewer session slots than the anchor's deepest workload needs ($(sed -n 's/^ slots  : //p' ours.txt))"
    fi
  fi
  o4=$(awk '$1 == "4k-randread" && $3 == "nfsrdma" { print $4 }' ours.txt)
  o1=$(awk '$1 == "1m-seqread" && $3 == "nfsrdma" { print $5 }' ours.txt)
  [ -n "$o4" ] && [ -n "$o1" ] || vm_fail "no nfsrdma rows in the anchor output"
  fio_run k4k randread 4k 32
  fio_run k1m read 1m 8
  # --minimal (terse v3): field 7 read bandwidth KiB/s, field 8 read IOPS.
  k4=$(awk -F';' '{ print $8 }' k4k.fio | tail -n 1)
  k1=$(awk -F';' '{ printf "%.1f", $7 / 1024 }' k1m.fio | tail -n 1)
  echo "round $round: 4k-randread QD32 nfsrdma $o4 kernel $k4 IOPS; 1m-seqread QD8 nfsrdma $o1 kernel $k1 MiB/s"
  ours_4k="$ours_4k $o4" ours_1m="$ours_1m $o1" kern_4k="$kern_4k $k4" kern_1m="$kern_1m $k1"
done
# shellcheck disable=SC2086 # the lists are words
our_iops=$(median $ours_4k) our_mib=$(median $ours_1m) k_iops=$(median $kern_4k) k_mib=$(median $kern_1m)
awk -v oi="$our_iops" -v ki="$k_iops" -v om="$our_mib" -v km="$k_mib" -v n="$nc" 'BEGIN {
  printf "nconnect=%d 4k-randread QD32 (median of 3): nfsrdma %.1f IOPS, kernel %.1f IOPS, ratio %.2fx\n", n, oi, ki, (ki > 0 ? oi / ki : 0)
  printf "nconnect=%d 1m-seqread  QD8  (median of 3): nfsrdma %.1f MiB/s, kernel %.1f MiB/s, ratio %.2fx\n", n, om, km, (km > 0 ? om / km : 0)
}'
awk -v oi="$our_iops" -v ki="$k_iops" -v om="$our_mib" -v km="$k_mib" \
  'BEGIN { exit !(oi >= ki && om >= km) }' ||
  echo "NOTE: nconnect=$nc: below the kernel client on at least one workload (see the ratios above)"

# How the kernel spread its load: one xprt: line per transport of the mount
# (rdma: field 8 is sends, field 9 receives).
awk -v m="$mnt" '
  $1 == "device" { inside = ($5 == m) }
  inside && $1 == "xprt:" { n++; sends = sends " " $8; recvs = recvs " " $9 }
  END { printf "kernel nconnect=%s: %d xprt: lines in mountstats; sends per xprt:%s; receives per xprt:%s\n", "'"$nc"'", n, sends, recvs }' \
  /proc/self/mountstats
xprts=$(awk -v m="$mnt" '$1 == "device" { inside = ($5 == m) } inside && $1 == "xprt:" { n++ } END { print n + 0 }' /proc/self/mountstats)
[ "$xprts" -eq "$nc" ] || echo "NOTE: the kernel's mount shows $xprts xprt: lines, expected $nc"
