#!/bin/sh
# Why: a tuner is worth running only if it finds what an exhaustive sweep
# finds, for a fraction of the runs, and beats the rules of thumb an
# engineer would apply by hand. A benchmark, not a CI test: it runs only
# when asked (tests/vm/tune-vs-grid.sh sets TUNE_GRID=1; CI's boot skips it
# at once). On the detuned knfsd of 72-tune (1 nfsd thread, max_requests 8,
# a disk of 3 ms a request, every trial cold) and the kernel client over
# RDMA from nconnect=1,rsize=wsize=4096, for two workloads:
#   4k-randread QD32 (O_DIRECT)    knobs nconnect, nfsd.threads, svcrdma.max_requests
#   1m-read (buffered, MiB/s of the first 16 MiB of a 40 MiB file: at
#            the start, rsize 4096 and 1 thread, a trial takes tens of seconds)
#                                  knobs rsize, read_ahead_kb, nfsd.threads
# each: `tune --search grid` (every combination once), then `tune` with a
# third of the grid's trials and --versus the grid's best and the field's
# rules of thumb (nconnect 8, 4 nfsd threads a core, max_requests 128,
# read-ahead 15 MiB for the sequential reads), each alternated with tune's
# recommendation in 5 pairs (3 left intervals of +-0.2..0.5x). Prints a GRID and a TUNE line per workload; fails only
# when a run fails (the figures are what the benchmark reports).
# vm-timeout: 5400
set -eu
. "$VM_LIB/vm.sh"
. "$VM_LIB/knfsd.sh"
[ "${TUNE_GRID:-0}" = 1 ] || vm_skip "a benchmark: tests/vm/tune-vs-grid.sh runs it"
command -v nfsrdma-bench >/dev/null || vm_fail "nfsrdma-bench is not in the overlay"
command -v nfsrdma-server >/dev/null || vm_fail "nfsrdma-server is not in the overlay"
KNFSD_EXPORT=/srv/grid
trap 'knfsd_detuned_cleanup gridslow' EXIT
trap 'exit 143' TERM INT
knfsd_slow_disk gridslow
knfsd_apply_detuned server.yaml
threads_rule=$((4 * $(nproc)))
target="knfs:$SERVER_IP:$KNFSD_EXPORT?proto=rdma&nconnect=1&rsize=4096&wsize=4096"
common="--target $target --drop-server-cache --server-config server.yaml --allow-server-changes --work-dir $VM_TMP"

# after KEY FILE: the JSON from the first "KEY": on (one line).
after() { sed "s/.*\"$1\": //" "$2"; }
# num KEY TEXT-ON-STDIN: the first number of "KEY":.
num() { grep -o "\"$1\": [0-9.e+-]*" | head -n1 | sed 's/.*: //'; }
str() { grep -o "\"$1\": \"[^\"]*\"" | head -n1 | sed 's/.*: "//; s/"$//'; }
trials_of() { grep -o '"cpu_s"' "$1" | wc -l; }
# Each tune run leaves its file set on the export (a 128 MiB ramdisk).
clean_export() { find "$KNFSD_EXPORT" -mindepth 1 -maxdepth 1 ! -name lost+found -exec rm -rf {} +; }

# compare NAME KNOBS RULES WORKLOAD...: the grid, then tune against it.
compare() {
  name=$1 knobs=$2 rules=$3
  shift 3
  # shellcheck disable=SC2086 # common and the workload's words are meant to split
  nfsrdma-bench tune $common "$@" --knobs "$knobs" --search grid --trials 1000 --budget 90m \
    --json "grid-$name.json" >"grid-$name.txt" 2>&1 || {
    cat "grid-$name.txt" >&2
    vm_fail "$name: tune --search grid failed"
  }
  clean_export
  grid_trials=$(trials_of "grid-$name.json")
  grid_keys=$(after recommendation "grid-$name.json" | str keys)
  grid_best=$(after recommendation "grid-$name.json" | num value)
  sed -n '/^grid (the best/,$p' "grid-$name.txt"
  echo "GRID $name: $grid_trials trials, best $grid_best (${grid_keys:-start}), $(num seconds <"grid-$name.json") s"
  budget=$((grid_trials / 3))
  versus=""
  [ -n "$grid_keys" ] && versus="--versus grid:$grid_keys"
  # shellcheck disable=SC2086
  nfsrdma-bench tune $common "$@" --knobs "$knobs" --trials "$budget" --budget 90m \
    $versus --versus "rules:$rules" --versus-pairs 5 --json "tune-$name.json" >"tune-$name.txt" 2>&1 || {
    cat "tune-$name.txt" >&2
    vm_fail "$name: tune failed"
  }
  clean_export
  cat "tune-$name.txt"
  tune_trials=$(trials_of "tune-$name.json")
  rec=$(after recommendation "tune-$name.json")
  vs=$(after versus "tune-$name.json")
  line="TUNE $name: $tune_trials trials (budget $budget), best $(echo "$rec" | str keys)"
  # The grid's best is one run's figure, the highest of many (chosen for
  # being high, and earlier in the boot); only the alternated pairs below
  # compare the two settings fairly.
  line="$line, confirmed mean $(echo "$rec" | num value) against the grid's best single run $grid_best"
  for label in grid rules; do
    part=$(echo "$vs" | sed -n "s/.*\"label\": \"$label\"\(.*\)/\1/p")
    [ -n "$part" ] || continue
    line="$line; vs $label $(echo "$part" | num ratio)x ($(echo "$part" | num ratio_low)..$(echo "$part" | num ratio_high)x, median $(echo "$part" | num ratio_median)x)"
  done
  echo "$line"
}

# TUNE_GRID_WORKLOADS (comma-separated) runs some of them: a quicker check
# of one workload; the claim needs both in one boot.
wanted() {
  case ",${TUNE_GRID_WORKLOADS:-4k-randread,1m-read}," in
    *",$1,"*) return 0 ;;
  esac
  return 1
}
if wanted 4k-randread; then
  compare 4k-randread nconnect,nfsd.threads,svcrdma.max_requests \
    "nconnect=8&nfsd.threads=$threads_rule&svcrdma.max_requests=128" \
    --profile 4k-randread --size 32m --runtime 2 --ramp 0.3
fi
if wanted 1m-read; then
  compare 1m-read rsize,read_ahead_kb,nfsd.threads \
    "nconnect=8&nfsd.threads=$threads_rule&svcrdma.max_requests=128&read_ahead_kb=15360" \
    --profile 4m-read --bs 1m --direct 0 --size 40m --io-bytes 16m --ramp 0 --objective mibps
fi
