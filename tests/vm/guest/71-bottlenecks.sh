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
# (DELTA run name value), derived shares (DERIVED), a 250 ms series (S),
# its summary (SERIES) and the benchmark's own verdict (BOUND). It fails only when a run fails: it is a probe; the
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
hog=""
clear_netem() {
  tc qdisc del dev "$SERVER_NETDEV" root 2>/dev/null || true
  tc qdisc del dev "$CLIENT_NETDEV" root 2>/dev/null || true
}
cleanup() {
  if [ -n "$hog" ]; then kill "$hog" 2>/dev/null || true; fi
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
# snap.awk: "name value" per counter. Given files as arguments it reads them
# (a file it cannot read gives "name ERR"); given none it reads a sampler's
# stream: "T UPTIME" starts a reading, "P PATH" a file, other lines are that
# file's. nfsd threads (/proc/PID/stat) add their state letters, how many are
# not idle (I) and their CPU ticks; a process's tasks add their ticks.
cat >snap.awk <<'EOF'
function line_of(f, line,   n, p, a, d, k) {
  n = split(f, p, "/")
  if (f ~ /\/hw_counters\// || f ~ /^\/sys\/class\/net\//) print p[5] "." p[n], line
  else if (f ~ /svc_rdma/) print "svcrdma." p[n], line
  else if (f == "/proc/fs/nfsd/threads") print "nfsd.threads", line
  else if (f == "/proc/fs/nfsd/pool_stats") {
    k = split(line, d, " ")
    if (d[1] == "#") { for (; k >= 3; k--) h[k - 1] = d[k]; return }
    for (; k >= 2; k--) print "pool" d[1] "." h[k], d[k]
  } else if (f == "/proc/stat") {
    if (line !~ /^cpu/) return
    split(line, d, " ")
    for (k = 1; k <= 8; k++) print d[1] "." cpu_names[k], d[k + 1]
  } else if (f ~ /\/wchan$/) {
    if (line != "0" && line != "" && line != "ERR") wchan[line]++
  } else if (f ~ /\/schedstat$/) {
    split(line, d, " ")  # run_ns wait_ns timeslices
    print "task." p[5] ".run_ns", d[1]; print "task." p[5] ".wait_ns", d[2]
  } else if (f ~ /\/stat$/) {
    comm = line; sub(/^[^(]*\(/, "", comm); sub(/\)[^)]*$/, "", comm); gsub(/[ .]/, "_", comm)
    sub(/.*\) /, "", line)
    if (split(line, a, " ") < 13) return  # a[1] state (field 3), a[12] utime, a[13] stime
    if (f ~ /\/task\//) { print "task." p[5] "." comm ".ticks", a[12] + a[13]; return }
    nthreads++; letters = letters a[1]; if (a[1] != "I") busy++; ticks += a[12] + a[13]
  }
}
function flush_nfsd() {
  if (nthreads) { print "nfsd.letters", letters; print "nfsd.notidle", busy + 0; print "nfsd.cputicks", ticks + 0 }
  w = ""; for (k in wchan) w = w (w == "" ? "" : ",") k ":" wchan[k]
  if (w != "") print "nfsd.wchan", w
  letters = ""; busy = 0; ticks = 0; nthreads = 0; delete wchan
}
BEGIN {
  split("user nice system idle iowait irq softirq steal", cpu_names, " ")
  if (ARGC < 2) stream = 1
  for (i = 1; i < ARGC; i++) {
    f = ARGV[i]; got = 0
    while ((getline v < f) > 0) { got = 1; line_of(f, v) }
    close(f)
    if (!got && f !~ /\/stat$/) line_of(f, "ERR")
  }
  if (!stream) { flush_nfsd(); exit }
}
$1 == "T" { flush_nfsd(); print; next }
$1 == "P" { cur = $2; next }
{ line_of(cur, $0) }
END { flush_nfsd() }
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
# counter that moved, "GAUGE" for a level that changed (not a count),
# "STATE" for state strings, "GONE"/"NEW" for counters
# present on one side only, and the CPU shares of the interval.
cat >delta.awk <<'EOF'
FNR == NR { b[$1] = $2; next }
{
  a[$1] = $2
  if (!($1 in b)) { print "NEW", run, $1, $2; next }
  if ($1 ~ /(idle_time|connect_time|notidle|threads|max_requests|max_req_size|read_requests|lifespan|srcport)$/) {
    if ($2 != b[$1]) print "GAUGE", run, $1, b[$1], "->", $2
    next
  }
  if ($2 ~ /^[0-9]+$/ && b[$1] ~ /^[0-9]+$/) {
    d = $2 - b[$1]; dd[$1] = d
    if (d != 0) print "DELTA", run, $1, d
    if ($1 ~ /^cpu[0-9]*\./) { c = $1; sub(/\..*/, "", c); f = $1; sub(/^[^.]*\./, "", f); cpu[c, f] += d; tot[c] += d }
  } else if ($2 != b[$1]) print "STATE", run, $1, b[$1], "->", $2
}
END {
  for (k in b) if (!(k in a)) print "GONE", run, k
  if (dd["pool0.sockets-enqueued"] > 0)
    printf "DERIVED %s pool woken_per_enqueued=%.3f arrived_per_enqueued=%.3f nfsd_cpu_ticks_per_1k_arrived=%.1f\n", run,
      dd["pool0.threads-woken"] / dd["pool0.sockets-enqueued"], dd["pool0.packets-arrived"] / dd["pool0.sockets-enqueued"],
      (dd["pool0.packets-arrived"] > 0 ? 1000 * dd["nfsd.cputicks"] / dd["pool0.packets-arrived"] : 0)
  pk = dd["rxe0.rcvd_pkts"] + dd["rxe1.rcvd_pkts"]
  if (pk > 0)
    printf "DERIVED %s rxe per_10k_rcvd_pkts: completer_retry_err=%.1f rcvd_seq_err=%.1f out_of_seq_request=%.1f duplicate_request=%.1f qdisc_dropped=%.1f\n", run,
      1e4 * (dd["rxe0.completer_retry_err"] + dd["rxe1.completer_retry_err"]) / pk, 1e4 * (dd["rxe0.rcvd_seq_err"] + dd["rxe1.rcvd_seq_err"]) / pk,
      1e4 * (dd["rxe0.out_of_seq_request"] + dd["rxe1.out_of_seq_request"]) / pk, 1e4 * (dd["rxe0.duplicate_request"] + dd["rxe1.duplicate_request"]) / pk,
      1e4 * (dd["veth0.qdisc.dropped"] + dd["veth1.qdisc.dropped"]) / pk
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
    if ("nfsd.wchan" in v) line = line " wchan=" v["nfsd.wchan"]
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
  # ticks are USER_HZ (100 a second): ticks per second is a percentage.
  for (k in first) if (lt[k] > ft[k]) {
    s = (last[k] - first[k]) / (lt[k] - ft[k]) / (k ~ /_ns$/ ? 1e7 : 1)
    if (s >= 5) printf "TASK %s %s share=%.0f%%\n", run, k, s
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
# What the 250 ms series reads: the thread count, pool_stats, the rxe
# counters of loss and packets, svcrdma's calls and send-queue waits (and
# /proc/stat's first lines, the nfsd threads and the benchmark's tasks).
sample_files="/proc/fs/nfsd/threads /proc/fs/nfsd/pool_stats"
sample_files="$sample_files /proc/sys/sunrpc/svc_rdma/rdma_stat_recv /proc/sys/sunrpc/svc_rdma/rdma_stat_sq_starve"
for d in "$SERVER_DEV" "$CLIENT_DEV"; do
  for c in rcvd_pkts completer_retry_err out_of_seq_request duplicate_request rcvd_seq_err; do
    sample_files="$sample_files /sys/class/infiniband/$d/ports/1/hw_counters/$c"
  done
done
nfsd_stats=""
nfsd_wchans=""
# find_nfsd: the stat and wchan files of the running nfsd threads (after a thread change).
find_nfsd() {
  nfsd_stats=""
  nfsd_wchans=""
  for pid in $(pgrep -x nfsd); do
    nfsd_stats="$nfsd_stats /proc/$pid/stat"
    nfsd_wchans="$nfsd_wchans /proc/$pid/wchan"
  done
}
# snap_full FILE: every counter, the qdiscs' drops and, with the kernel mount
# up, its mountstats lines.
snap_full() {
  # shellcheck disable=SC2086 # lists of paths
  awk -f snap.awk $counter_files $nfsd_stats >"$1"
  for n in "$SERVER_NETDEV" "$CLIENT_NETDEV"; do
    tc -s qdisc show dev "$n" | awk -v n="$n" '$1 == "Sent" { gsub(/[(,)]/, ""); print n ".qdisc.sent_pkts", $4; print n ".qdisc.dropped", $7; exit }'
  done >>"$1"
  if grep -q " $mnt " /proc/mounts; then awk -v m="$mnt" -f mountstats.awk /proc/self/mountstats >>"$1"; fi
}
# sample_until PID FILE: a reading every 250 ms while PID runs, at most 240
# of them (~60 s; then the run is stuck and is killed). The shell's own read
# copies the files' lines (no fork but sleep's: TCG makes a fork cost tens of
# ms); snap.awk names them afterwards.
sample_until() {
  _su_i=0
  exec 3>"$2"
  while [ "$_su_i" -lt 240 ]; do
    read -r _su_a _su_comm _su_state _su_rest 2>/dev/null <"/proc/$1/stat" || break
    [ "$_su_state" != Z ] || break
    read -r _su_up _su_idle </proc/uptime
    echo "T $_su_up" >&3
    for _su_f in $sample_files $nfsd_stats $nfsd_wchans /proc/"$1"/task/*/stat /proc/"$1"/task/*/schedstat; do
      echo "P $_su_f" >&3
      { while IFS= read -r _su_l || [ -n "$_su_l" ]; do echo "$_su_l" >&3; done; } 2>/dev/null <"$_su_f" || true
    done
    echo "P /proc/stat" >&3
    {
      read -r _su_l && echo "$_su_l" >&3
      read -r _su_l && echo "$_su_l" >&3
      read -r _su_l && echo "$_su_l" >&3
    } </proc/stat
    sleep 0.25
    _su_i=$((_su_i + 1))
  done
  exec 3>&-
  [ "$_su_i" -lt 240 ] || { kill "$1" 2>/dev/null || true; echo "run $1 still going after 240 samples: killed"; }
}
# measure NAME PID: the 250 ms series while PID runs, then the reading
# after it; returns PID's exit status.
measure() {
  sample_until "$2" "$1.series"
  _m_rc=0
  wait "$2" || _m_rc=$?
  snap_full "$1.after"
  return "$_m_rc"
}
# report NAME: the deltas, the series and its summary.
report() {
  awk -v run="$1" -f delta.awk "$1.before" "$1.after" | sort
  awk -f snap.awk <"$1.series" | awk -v run="$1" -f series.awk
}
# json_num FILE KEY: the first number of "KEY": in a one-line JSON document.
json_num() { grep -o "\"$2\": [0-9.e+-]*" "$1" | head -n1 | sed 's/.*: //'; }

url="nfs://$SERVER_IP:20049$KNFSD_EXPORT?proto=rdma&bind=$CLIENT_IP&timeout=30000"
# ours NAME PLACE IODEPTH NUMJOBS: nfsrdma-bench file, 4k-randread over RDMA
# (PLACE "-": anywhere; "pin": on CPU 1; "pin-nice": on CPU 1 at nice 19),
# read before, every 250 ms and after; prints RUN.
ours() {
  _o_name=$1
  _o_cpus=$2
  find_nfsd
  snap_full "$_o_name.before"
  _o_start=$(cut -d' ' -f1 /proc/uptime)
  set -- file --target "nfs:$url" --profile 4k-randread --size "$SIZE" --runtime "$RUN_S" --ramp 0.5 \
    --iodepth "$3" --numjobs "$4" --json "$_o_name.json"
  case $_o_cpus in
    -) nfsrdma-bench "$@" >"$_o_name.txt" 2>&1 & ;;
    pin) taskset -c 1 nfsrdma-bench "$@" >"$_o_name.txt" 2>&1 & ;;
    pin-nice) nice -n 19 taskset -c 1 nfsrdma-bench "$@" >"$_o_name.txt" 2>&1 & ;;
  esac
  _o_pid=$!
  _o_rc=0
  measure "$_o_name" "$_o_pid" || _o_rc=$?
  [ "$_o_rc" -eq 0 ] || { cat "$_o_name.txt"; vm_fail "run $_o_name: nfsrdma-bench file exited $_o_rc"; }
  _o_iops=$(json_num "$_o_name.json" iops)
  _o_lat=$(json_num "$_o_name.json" mean)
  awk -v r="$_o_name" -v i="$_o_iops" -v l="$_o_lat" -v s="$(json_num "$_o_name.json" run_s)" \
    -v c="$(grep -o '"credits": [0-9][0-9]*' "$_o_name.json" | sed 's/.*: //' | tr '\n' ',')" \
    -v e="$(json_num "$_o_name.json" errors)" -v rc="$(json_num "$_o_name.json" reconnects)" \
    -v rs="$(json_num "$_o_name.json" resent)" -v st="$_o_start" -v en="$(cut -d' ' -f1 /proc/uptime)" \
    -v pid="$_o_pid" 'BEGIN {
      printf "RUN %s cell_s=%.2f wall_s=%.1f iops=%.0f lat_mean_us=%.0f inflight=%.1f credits=%s errors=%s reconnects=%s resent=%s pid=%s\n",
        r, s, en - st, i, l, i * l / 1e6, c, e, rc, rs, pid }'
  # The benchmark's own verdict (a build with bench/bound): "bound: TAG" and
  # its findings under the cell.
  awk -v r="$_o_name" '/^  bound: / { on = 1; print "BOUND", r, $0; next } on && /^    / { print "BOUND", r, $0; next } on { exit }' \
    "$_o_name.txt"
  report "$_o_name"
}
# kernel NAME: fio 4k randread, libaio, O_DIRECT, QD16 on the kernel mount.
kernel() {
  find_nfsd
  snap_full "$1.before"
  _k_start=$(cut -d' ' -f1 /proc/uptime)
  fio --name="$1" --filename="$mnt/fio.dat" --size="$SIZE" --rw=randread --bs=4k --iodepth=16 \
    --ioengine=libaio --direct=1 --thread --time_based --runtime="$RUN_S" --minimal >"$1.fio" 2>&1 &
  _k_rc=0
  measure "$1" $! || _k_rc=$?
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
# QD 64 x 2 jobs: unpinned with 8 and with 1 nfsd thread, pinned to CPU 1.
ours deep - 64 2
set_threads 1
ours threads1_deep - 64 2
set_threads 8
ours cpu_pinned pin 64 2
# The pinned benchmark, at nice 19, shares its CPU with a busy loop at nice
# 0: CPU 1 is saturated and the benchmark's threads wait for it (schedstat's
# wait_ns). Pinned alone it is not CPU-bound here: soft-RoCE's work runs in
# kernel workers on both CPUs, the benchmark's threads take 10-25% of one.
taskset -c 1 sh -c 'i=0; while [ "$i" -lt 200000000 ]; do i=$((i + 1)); done' &
hog=$!
ours cpu_hog pin-nice 64 2
kill "$hog" 2>/dev/null || true
wait "$hog" 2>/dev/null || true
hog=""
ours qd1 - 1 1
# The guest's speed drifts with the host's load: the healthy run and the
# thread-bound one again, to bracket that drift.
ours healthy_again - 16 1
set_threads 1
ours threads1_again - 16 1
set_threads 8

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
