#!/bin/sh
# Why: a verdict that names what bounded a figure needs thresholds taken from
# real counters, not from reading kernel source. This probe induces each
# bottleneck for real on one knfsd and records what the kernel's counters do:
# 4 KiB random reads over RDMA through nfsrdma-bench file, healthy (QD16, 8
# nfsd threads), with 1 nfsd thread, with 4 svcrdma credits, with 1% of the
# packets dropped on the veth wire (server side only, then both sides), with
# the benchmark pinned to one CPU at a depth that saturates it (and the same
# depth unpinned), at QD1; then fio on a kernel proto=rdma mount, healthy,
# with 1 thread, with loss and with 4 credits, read through mountstats.
# Per run it prints the benchmark's figures (RUN), every counter that moved
# (DELTA run name value), derived shares (DERIVED), a 250 ms series (S) and
# its summary (SERIES). It fails only when a run fails: it is a probe; the
# verdict rules that use its numbers assert on them.
# vm-timeout: 420
set -eu
. "$VM_LIB/vm.sh"
. "$VM_LIB/knfsd.sh"
command -v nfsrdma-bench >/dev/null || vm_fail "nfsrdma-bench is not in the overlay"
RUN_S=${BOTTLENECK_RUN_S:-5}
SIZE=16777216
knob=/proc/sys/sunrpc/svc_rdma/max_requests
threads_file=/proc/fs/nfsd/threads
mnt=$VM_TMP/kmnt
old_credits=$(cat "$knob")
cfs_mounted=0
clear_netem() {
  tc qdisc del dev "$SERVER_NETDEV" root 2>/dev/null || true
  tc qdisc del dev "$CLIENT_NETDEV" root 2>/dev/null || true
}
cleanup() {
  clear_netem
  echo "$old_credits" >"$knob" || true
  umount -f "$mnt" 2>/dev/null || true
  rmdir /sys/kernel/config/rdma_cm/"$SERVER_DEV" 2>/dev/null || true
  if [ "$cfs_mounted" = 1 ]; then umount /sys/kernel/config 2>/dev/null || true; fi
  knfsd_stop
}
trap cleanup EXIT
trap 'exit 143' TERM INT
modprobe sch_netem || vm_fail "modprobe sch_netem (the guest image has no netem)"

# --- The counter readers (awk: one fork reads every file) --------------------
# snap.awk: "name value" per counter file given; a file it cannot read gives
# "name ERR". nfsd threads (/proc/PID/stat) add their state letters, how many
# are not idle (I) and their CPU ticks; a process's tasks add their ticks.
cat >snap.awk <<'EOF'
function val(f,   v, r) { r = (getline v < f); close(f); return r > 0 ? v : "ERR" }
function stat_fields(f, a,   line, r) {
  r = (getline line < f); close(f)
  if (r <= 0) return 0
  comm = line; sub(/^[^(]*\(/, "", comm); sub(/\)[^)]*$/, "", comm); gsub(/[ .]/, "_", comm)
  sub(/.*\) /, "", line)
  return split(line, a, " ")  # a[1] state (field 3), a[12] utime, a[13] stime
}
function pools(f,   line, h, n, k, d) {
  while ((getline line < f) > 0) {
    n = split(line, d, " ")
    if (d[1] == "#") { for (k = 3; k <= n; k++) h[k - 1] = d[k]; continue }
    for (k = 2; k <= n; k++) print "pool" d[1] "." h[k], d[k]
  }
  close(f)
}
function cpus(f,   line, d, k) {
  split("user nice system idle iowait irq softirq steal", names, " ")
  while ((getline line < f) > 0) {
    split(line, d, " ")
    if (d[1] !~ /^cpu/) break
    for (k = 1; k <= 8; k++) print d[1] "." names[k], d[k + 1]
  }
  close(f)
}
BEGIN {
  letters = ""; busy = 0; ticks = 0; nthreads = 0
  for (i = 1; i < ARGC; i++) {
    f = ARGV[i]; n = split(f, p, "/")
    if (f ~ /\/hw_counters\//) print p[5] "." p[n], val(f)
    else if (f ~ /^\/sys\/class\/net\//) print p[5] "." p[n], val(f)
    else if (f ~ /svc_rdma/) print "svcrdma." p[n], val(f)
    else if (f == "/proc/fs/nfsd/threads") print "nfsd.threads", val(f)
    else if (f == "/proc/fs/nfsd/pool_stats") pools(f)
    else if (f == "/proc/stat") cpus(f)
    else if (f ~ /^\/proc\/[0-9]+\/stat$/) {
      if (stat_fields(f, a) < 13) continue
      nthreads++; letters = letters a[1]; if (a[1] != "I") busy++; ticks += a[12] + a[13]
    } else if (f ~ /\/task\/[0-9]+\/stat$/) {
      if (stat_fields(f, a) >= 13) print "task." p[5] "." comm ".ticks", a[12] + a[13]
    }
  }
  if (nthreads) { print "nfsd.letters", letters; print "nfsd.notidle", busy; print "nfsd.cputicks", ticks }
  exit
}
EOF

# mountstats.awk (-v m=MOUNTPOINT): the mount's rdma xprt line and its READ
# line with the kernel's field names.
cat >mountstats.awk <<'EOF'
BEGIN {
  split("srcport bind_count connect_count connect_time idle_time sends recvs bad_xids req_u bklog_u " \
    "read_chunk_count write_chunk_count reply_chunk_count total_rdma_request total_rdma_reply " \
    "pullup_copy_count fixup_copy_count hardway_register_count failed_marshal_count bad_reply_count " \
    "nomsg_call_count mrs_recycled mrs_orphaned mrs_allocated local_inv_needed empty_sendctx_q " \
    "reply_waits_for_send", xn, " ")
  split("ops transmissions major_timeouts bytes_sent bytes_received queue_ms rtt_ms execute_ms errors", on, " ")
}
$1 == "device" { inside = ($5 == m) }
inside && $1 == "xprt:" && $2 == "rdma" { for (k = 3; k <= NF; k++) print "xprt." xn[k - 2], $k }
inside && $1 == "READ:" { for (k = 2; k <= NF; k++) print "READ." on[k - 1], $k }
EOF

# delta.awk (-v run=NAME BEFORE AFTER): "DELTA run name value" for every
# number that moved, "STATE" for state strings, "GONE"/"NEW" for counters
# present on one side only, and the CPU shares of the interval.
cat >delta.awk <<'EOF'
FNR == NR { b[$1] = $2; next }
{
  a[$1] = $2
  if (!($1 in b)) { print "NEW", run, $1, $2; next }
  if ($2 ~ /^[0-9]+$/ && b[$1] ~ /^[0-9]+$/) {
    d = $2 - b[$1]
    if (d != 0) print "DELTA", run, $1, d
    if ($1 ~ /^cpu[0-9]*\./) { c = $1; sub(/\..*/, "", c); f = $1; sub(/^[^.]*\./, "", f); cpu[c, f] += d; tot[c] += d }
  } else if ($2 != b[$1]) print "STATE", run, $1, b[$1], "->", $2
}
END {
  for (k in b) if (!(k in a)) print "GONE", run, k
  for (c in tot) if (tot[c] > 0)
    printf "DERIVED %s %s busy_pct=%.1f softirq_pct=%.1f system_pct=%.1f user_pct=%.1f\n", run, c,
      100 * (tot[c] - cpu[c, "idle"] - cpu[c, "iowait"]) / tot[c], 100 * cpu[c, "softirq"] / tot[c],
      100 * cpu[c, "system"] / tot[c], 100 * cpu[c, "user"] / tot[c]
}
EOF

# series.awk (-v run=NAME SAMPLES): one S line per 250 ms sample (nfsd
# letters and the counters' steps since the previous sample) and a summary:
# in how many samples every nfsd thread was busy (not I), and each task's
# share of one CPU over the whole series (USER_HZ 100).
cat >series.awk <<'EOF'
function flush(   k, line, dt, busy, tot, c) {
  if (!have) return
  if (prev_t != "") {
    dt = t - prev_t
    line = sprintf("S %s t=%.2f nfsd=%s", run, t - t0, v["nfsd.letters"])
    line = line sprintf(" arrived+%d enq+%d woken+%d", v["pool0.packets-arrived"] - p["pool0.packets-arrived"],
      v["pool0.sockets-enqueued"] - p["pool0.sockets-enqueued"], v["pool0.threads-woken"] - p["pool0.threads-woken"])
    line = line sprintf(" rtx+%d oos+%d dup+%d", v["rxe0.completer_retry_err"] + v["rxe1.completer_retry_err"] - \
      p["rxe0.completer_retry_err"] - p["rxe1.completer_retry_err"],
      v["rxe0.out_of_seq_request"] + v["rxe1.out_of_seq_request"] - p["rxe0.out_of_seq_request"] - p["rxe1.out_of_seq_request"],
      v["rxe0.duplicate_request"] + v["rxe1.duplicate_request"] - p["rxe0.duplicate_request"] - p["rxe1.duplicate_request"])
    for (c = 0; c < 2; c++) {
      tot = 0; busy = 0
      for (k in v) if (k ~ ("^cpu" c "\\.")) { tot += v[k] - p[k]; if (k !~ /idle|iowait/) busy += v[k] - p[k] }
      line = line sprintf(" cpu%d=%d%%", c, tot > 0 ? 100 * busy / tot : 0)
    }
    print line
    samples++; if (v["nfsd.notidle"] == v["nfsd.threads"]) allbusy++; notidle += v["nfsd.notidle"]
  } else t0 = t
  for (k in v) { p[k] = v[k]; if (k ~ /^task\./) { if (!(k in first)) { first[k] = v[k]; ft[k] = t } last[k] = v[k]; lt[k] = t } }
  prev_t = t; delete v; have = 0
}
$1 == "T" { flush(); t = $2; next }
{ v[$1] = $2; have = 1 }
END {
  flush()
  if (samples) printf "SERIES %s samples=%d nfsd_all_busy=%d (%.0f%%) nfsd_mean_notidle=%.1f\n", run, samples,
    allbusy, 100 * allbusy / samples, notidle / samples
  for (k in first) if (lt[k] > ft[k]) {
    s = (last[k] - first[k]) / (lt[k] - ft[k])
    if (s >= 5) printf "TASK %s %s cpu_share=%.0f%%\n", run, k, s
  }
}
EOF

# Counter files read by every reading (expanded here, once: no fork per sample).
counter_files="/proc/fs/nfsd/threads /proc/fs/nfsd/pool_stats /proc/stat"
counter_files="$counter_files $(echo /proc/sys/sunrpc/svc_rdma/*)"
for d in "$SERVER_DEV" "$CLIENT_DEV"; do
  counter_files="$counter_files $(echo /sys/class/infiniband/"$d"/ports/1/hw_counters/*)"
done
for n in "$SERVER_NETDEV" "$CLIENT_NETDEV"; do
  for c in rx_packets tx_packets rx_dropped tx_dropped rx_errors tx_errors; do
    counter_files="$counter_files /sys/class/net/$n/statistics/$c"
  done
done
nfsd_stats=""
# find_nfsd: the stat files of the running nfsd threads (after a thread change).
find_nfsd() {
  nfsd_stats=""
  for pid in $(pgrep -x nfsd); do nfsd_stats="$nfsd_stats /proc/$pid/stat"; done
}
# snap_full FILE: every counter, the qdiscs' drops and, with the kernel mount
# up, its mountstats lines.
snap_full() {
  # shellcheck disable=SC2086 # lists of paths
  awk -f snap.awk $counter_files $nfsd_stats >"$1"
  for n in "$SERVER_NETDEV" "$CLIENT_NETDEV"; do
    tc -s qdisc show dev "$n" | awk -v n="$n" '$1 == "Sent" { gsub(/[(,)]/, ""); print n ".qdisc.sent_pkts", $4; print n ".qdisc.dropped", $6; exit }'
  done >>"$1"
  if grep -q " $mnt " /proc/mounts; then awk -v m="$mnt" -f mountstats.awk /proc/self/mountstats >>"$1"; fi
}
# sample_until PID FILE: a reading every 250 ms (uptime first) while PID runs,
# at most 240 of them (~60 s; then the run is stuck and is killed).
sample_until() {
  _su_i=0
  : >"$2"
  while [ "$_su_i" -lt 240 ]; do
    read -r _su_a _su_comm _su_state _su_rest <"/proc/$1/stat" || break
    [ "$_su_state" != Z ] || break
    read -r _su_up _su_idle </proc/uptime
    echo "T $_su_up" >>"$2"
    # shellcheck disable=SC2086 # lists of paths
    awk -f snap.awk $counter_files $nfsd_stats /proc/"$1"/task/*/stat >>"$2" 2>/dev/null || true
    sleep 0.25
    _su_i=$((_su_i + 1))
  done
  [ "$_su_i" -lt 240 ] || { kill "$1" 2>/dev/null || true; echo "run $1 still going after 240 samples: killed"; }
}
# report NAME: the deltas, the series and its summary.
report() {
  awk -v run="$1" -f delta.awk "$1.before" "$1.after" | sort
  awk -v run="$1" -f series.awk "$1.series"
}
# json_num FILE KEY: the first number of "KEY": in a one-line JSON document.
json_num() { grep -o "\"$2\": [0-9.e+-]*" "$1" | head -n1 | sed 's/.*: //'; }

url="nfs://$SERVER_IP:20049$KNFSD_EXPORT?proto=rdma&bind=$CLIENT_IP&timeout=30000"
# ours NAME CPUS IODEPTH NUMJOBS: nfsrdma-bench file, 4k-randread over RDMA
# (CPUS "-": not pinned), read before, every 250 ms and after; prints RUN.
ours() {
  _o_name=$1
  _o_cpus=$2
  find_nfsd
  snap_full "$_o_name.before"
  _o_start=$(cut -d' ' -f1 /proc/uptime)
  set -- file --target "nfs:$url" --profile 4k-randread --size "$SIZE" --runtime "$RUN_S" --ramp 0.5 \
    --iodepth "$3" --numjobs "$4" --json "$_o_name.json"
  if [ "$_o_cpus" = - ]; then
    nfsrdma-bench "$@" >"$_o_name.txt" 2>&1 &
  else
    taskset -c "$_o_cpus" nfsrdma-bench "$@" >"$_o_name.txt" 2>&1 &
  fi
  _o_pid=$!
  sample_until "$_o_pid" "$_o_name.series"
  _o_rc=0
  wait "$_o_pid" || _o_rc=$?
  snap_full "$_o_name.after"
  [ "$_o_rc" -eq 0 ] || { cat "$_o_name.txt"; vm_fail "run $_o_name: nfsrdma-bench file exited $_o_rc"; }
  _o_iops=$(json_num "$_o_name.json" iops)
  _o_lat=$(json_num "$_o_name.json" mean)
  awk -v r="$_o_name" -v i="$_o_iops" -v l="$_o_lat" -v s="$(json_num "$_o_name.json" run_s)" \
    -v c="$(grep -o '"credits": [0-9]*' "$_o_name.json" | sed 's/.*: //' | tr '\n' ',')" \
    -v e="$(json_num "$_o_name.json" errors)" -v rc="$(json_num "$_o_name.json" reconnects)" \
    -v rs="$(json_num "$_o_name.json" resent)" -v st="$_o_start" -v en="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN {
      printf "RUN %s cell_s=%.2f wall_s=%.1f iops=%.0f lat_mean_us=%.0f inflight=%.1f credits=%s errors=%s reconnects=%s resent=%s\n",
        r, s, en - st, i, l, i * l / 1e6, c, e, rc, rs }'
  report "$_o_name"
}
# kernel NAME: fio 4k randread, libaio, O_DIRECT, QD16 on the kernel mount.
kernel() {
  find_nfsd
  snap_full "$1.before"
  _k_start=$(cut -d' ' -f1 /proc/uptime)
  fio --name="$1" --filename="$mnt/fio.dat" --size="$SIZE" --rw=randread --bs=4k --iodepth=16 \
    --ioengine=libaio --direct=1 --thread --time_based --runtime="$RUN_S" --minimal >"$1.fio" 2>&1 &
  _k_pid=$!
  sample_until "$_k_pid" "$1.series"
  _k_rc=0
  wait "$_k_pid" || _k_rc=$?
  snap_full "$1.after"
  [ "$_k_rc" -eq 0 ] || { cat "$1.fio"; vm_fail "run $1: fio exited $_k_rc"; }
  # terse v3: 8 read IOPS, 9 runtime ms, 40 total latency mean (us)
  awk -F';' -v r="$1" -v st="$_k_start" -v en="$(cut -d' ' -f1 /proc/uptime)" 'NF > 40 {
    printf "RUN %s cell_s=%.2f wall_s=%.1f iops=%.0f lat_mean_us=%.0f inflight=%.1f\n", r, $9 / 1000, en - st, $8, $40, $8 * $40 / 1e6 }' \
    "$1.fio" | tail -n1
  report "$1"
  awk -v r="$1" '$1 == "DELTA" && $2 == r { d[$3] = $4 } END {
    if (d["xprt.sends"] > 0) printf "DERIVED %s mountstats mean_inflight=%.2f mean_backlog=%.2f\n", r,
      d["xprt.req_u"] / d["xprt.sends"], d["xprt.bklog_u"] / d["xprt.sends"]
    if (d["READ.ops"] > 0) printf "DERIVED %s mountstats READ queue_ms=%.3f rtt_ms=%.3f execute_ms=%.3f per op, retransmits=%d\n", r,
      d["READ.queue_ms"] / d["READ.ops"], d["READ.rtt_ms"] / d["READ.ops"], d["READ.execute_ms"] / d["READ.ops"],
      d["READ.transmissions"] - d["READ.ops"] }' <<EOF
$(awk -v run="$1" -f delta.awk "$1.before" "$1.after")
EOF
}
set_threads() {
  echo "$1" >"$threads_file" || vm_fail "echo $1 > $threads_file"
  vm_wait 20 "$1 nfsd threads" sh -c "[ \$(pgrep -x nfsd | wc -l) -eq $1 ]" || vm_fail "nfsd did not get to $1 threads"
}
loss() { tc qdisc add dev "$1" root netem loss 1% || vm_fail "tc netem loss 1% on $1"; }

# --- What the kernel offers (the points the notes left unverified) ----------
knfsd_start
t0=$(cut -d' ' -f1 /proc/uptime)
echo "FACT rxe0 port 1: $(ls /sys/class/infiniband/"$SERVER_DEV"/ports/1/ | tr '\n' ' ')"
echo "FACT rxe0 hw_counters: $(ls /sys/class/infiniband/"$SERVER_DEV"/ports/1/hw_counters/ | tr '\n' ' ')"
echo "FACT svc_rdma: $(ls /proc/sys/sunrpc/svc_rdma/ | tr '\n' ' ')"
echo "FACT sunrpc pool_mode=$(cat /sys/module/sunrpc/parameters/pool_mode) pools=$(grep -vc '^#' /proc/fs/nfsd/pool_stats) pool_threads=$(cat /proc/fs/nfsd/pool_threads)"
echo "FACT pool_stats: $(tr '\n' '|' </proc/fs/nfsd/pool_stats)"
echo "FACT rdma statistic: $(rdma statistic show link "$SERVER_DEV/1" 2>&1 | head -c 400)"
if ! grep -q ' /sys/kernel/config ' /proc/mounts; then
  modprobe configfs 2>/dev/null || true
  mount -t configfs none /sys/kernel/config && cfs_mounted=1
fi
if mkdir /sys/kernel/config/rdma_cm/"$SERVER_DEV" 2>cfs.err; then
  echo "FACT configfs rdma_cm/$SERVER_DEV/ports: $(ls /sys/kernel/config/rdma_cm/"$SERVER_DEV"/ports/ | tr '\n' ' ')" \
    "default_roce_tos=$(cat /sys/kernel/config/rdma_cm/"$SERVER_DEV"/ports/1/default_roce_tos)" \
    "default_roce_mode=$(cat /sys/kernel/config/rdma_cm/"$SERVER_DEV"/ports/1/default_roce_mode)"
  rmdir /sys/kernel/config/rdma_cm/"$SERVER_DEV"
else
  echo "FACT configfs rdma_cm: mkdir failed: $(cat cfs.err)"
fi
find_nfsd
echo "FACT idle nfsd threads: $(awk -f snap.awk $nfsd_stats | tr '\n' ' ')"
echo "FACT max_requests=$old_credits threads=$(cat "$threads_file")"

# The file sets: written on the server's tmpfs, as the benchmark would lay
# them out (it reads only; it rewrites no file already at full size).
for j in 0 1; do head -c "$SIZE" /dev/urandom >"$KNFSD_EXPORT/nfsrdma-bench.s1.b$SIZE.j$j.f0"; done
head -c "$SIZE" /dev/urandom >"$KNFSD_EXPORT/fio.dat"

# --- Our client over RDMA ----------------------------------------------------
RUN_S_SAVED=$RUN_S RUN_S=1
ours warmup - 16 1 >/dev/null
RUN_S=$RUN_S_SAVED
ours healthy - 16 1
set_threads 1
ours threads1 - 16 1
set_threads 8
echo 4 >"$knob"
ours credits4 - 16 1
echo "$old_credits" >"$knob"
loss "$SERVER_NETDEV"
ours loss_veth0 - 16 1
tc -s qdisc show dev "$SERVER_NETDEV"
loss "$CLIENT_NETDEV"
ours loss_both - 16 1
tc -s qdisc show dev "$SERVER_NETDEV"
tc -s qdisc show dev "$CLIENT_NETDEV"
clear_netem
ours cpu_pinned 1 64 2
ours cpu_free - 64 2
ours qd1 - 1 1

# --- The kernel client on a proto=rdma mount ---------------------------------
knfsd_mount "$mnt"
kernel k_healthy
set_threads 1
kernel k_threads1
set_threads 8
loss "$SERVER_NETDEV"
loss "$CLIENT_NETDEV"
kernel k_loss_both
clear_netem
umount "$mnt" || vm_fail "umount $mnt"
echo 4 >"$knob"
knfsd_mount "$mnt"
kernel k_credits4
echo "$old_credits" >"$knob"

echo "FACT svcrdma at the end: $(for f in /proc/sys/sunrpc/svc_rdma/rdma_stat_*; do printf '%s=%s ' "${f##*/}" "$(cat "$f" 2>&1)"; done)"
echo "FACT runs took $(awk -v a="$t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.0f", b - a }') s in the guest"
