#!/usr/bin/env bash
# Why: no host here has RDMA hardware or a kernel NFS server, but a Debian
# kernel under qemu (pure TCG) has soft-RoCE and knfsd. This is the one entry
# point of the VM testbed: it gets the kernel and the cached base initramfs,
# appends an overlay with the freshly built project binaries and the guest
# tests, boots the guest with no network to the outside (-nic none) under a
# hard timeout, and turns the guest's `RESULT <name> PASS|FAIL|SKIP <s>`
# console lines into an exit status.
#
# Usage: tests/vm/run.sh [options]
#   --build-dir DIR    where build/bin/nfsrdma-* come from and logs go (default: <repo>/build)
#   --test NAME        run only this guest test (NN-name or name); repeat it or
#                      give a comma-separated list for several
#   --shell            interactive: set up, run --test (if given), then a shell on the console
#   --kernel-deb FILE  kernel image .deb to boot (also NFSRDMA_VM_KERNEL_DEB)
#   --timeout SEC      hard limit for the whole VM run (default: 90 + sum of test timeouts)
#   --test-timeout SEC every selected guest test's limit, instead of its own vm-timeout line
#   --env NAME=VALUE   exported to the guest tests (repeatable; NAME in capitals, VALUE
#                      without blanks): how a test runs longer than in CI, e.g.
#                      tests/vm/ride-through-soak.sh
#   --list             print the guest tests and exit
# Environment: NFSRDMA_VM_TESTS (default for --test, e.g. from ctest),
# NFSRDMA_VM_CACHE (cache root), NFSRDMA_VM_QEMU (qemu binary), NFSRDMA_REQUIRE_REAL=1 (fail
# instead of skipping when qemu or the kernel is unavailable),
# NFSRDMA_VM_KERNEL_REFRESH=1 (ask the mirror for a newer kernel).
# Exit: 0 all passed (or skipped inside the guest), 1 failure/timeout,
# 77 testbed unavailable on this host (ctest SKIP_RETURN_CODE).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=lib/common.sh
source "$here/lib/common.sh"

build_dir=$root/build
only=${NFSRDMA_VM_TESTS:-}
shell=0
list=0
vm_timeout=${NFSRDMA_VM_TIMEOUT:-}
kernel_args=()
[[ -n ${NFSRDMA_VM_KERNEL_DEB:-} ]] && kernel_args=(--deb "$NFSRDMA_VM_KERNEL_DEB")
test_timeout=""
guest_args=""  # nfsrdma.env=... and nfsrdma.test_timeout=... on the kernel command line
while (($#)); do
  case $1 in
    --build-dir) build_dir=${2:?--build-dir needs a directory}; shift 2 ;;
    --test) only=${only:+$only,}${2:?--test needs a name}; shift 2 ;;
    --shell) shell=1; shift ;;
    --kernel-deb) kernel_args=(--deb "${2:?--kernel-deb needs a file}"); shift 2 ;;
    --timeout) vm_timeout=${2:?--timeout needs seconds}; shift 2 ;;
    --test-timeout)
      test_timeout=${2:?--test-timeout needs seconds}
      [[ $test_timeout =~ ^[1-9][0-9]*$ ]] || vm_die "--test-timeout $test_timeout: expected whole seconds"
      guest_args+=" nfsrdma.test_timeout=$test_timeout"
      shift 2 ;;
    --env)
      [[ ${2:-} =~ ^[A-Z][A-Z0-9_]*=[^[:space:]]*$ ]] ||
        vm_die "--env ${2:-}: expected NAME=VALUE (NAME in capitals, digits and _, VALUE without blanks)"
      guest_args+=" nfsrdma.env=$2"
      shift 2 ;;
    --list) list=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) vm_die "unknown argument $1 (see --help)" ;;
  esac
done

# --- Which guest tests: executable tests/vm/guest/NN-name.sh, in order -------
guest=$here/guest
tests=()
names=()
limits=()
declare -A seen=()
for f in "$guest"/[0-9][0-9]-*.sh; do
  [[ -e $f ]] || continue
  [[ -x $f ]] || vm_die "guest test $f is not executable (chmod +x it)"
  stem=$(basename "$f" .sh)
  name=${stem#[0-9][0-9]-}
  [[ $name =~ ^[A-Za-z0-9_-]+$ ]] || vm_die "guest test $f: name '$name' must be letters, digits, - or _"
  [[ -z ${seen[$name]:-} ]] || vm_die "two guest tests are named $name"
  seen[$name]=1
  if [[ -n $only && ",$only," != *",$stem,"* && ",$only," != *",$name,"* ]]; then continue; fi
  limit=$(sed -n 's/^# vm-timeout:[ \t]*\([0-9][0-9]*\).*/\1/p' "$f" | head -n1)
  [[ -z $test_timeout ]] || limit=$test_timeout
  tests+=("$f")
  names+=("$name")
  limits+=("${limit:-180}")
done
if ((list)); then
  for i in "${!names[@]}"; do printf '%s\t%ss\t%s\n' "${names[i]}" "${limits[i]}" "${tests[i]#"$root"/}"; done
  exit 0
fi
if [[ -n $only ]]; then
  IFS=, read -ra wanted <<<"$only"
  for w in "${wanted[@]}"; do
    found=0
    for f in "${tests[@]}"; do
      stem=$(basename "$f" .sh)
      [[ $w == "$stem" || $w == "${stem#[0-9][0-9]-}" ]] && found=1
    done
    ((found)) || vm_die "no guest test named $w (try --list)"
  done
fi
((${#tests[@]} > 0 || shell)) || vm_die "no guest tests in $guest"

# --- Host capabilities ----------------------------------------------------------
qemu_bin=${NFSRDMA_VM_QEMU:-qemu-system-x86_64}
for tool in "$qemu_bin" timeout cpio zstd dpkg-deb depmod modprobe ldd flock; do
  command -v "$tool" >/dev/null || vm_missing "$tool not found (scripts/install-deps.sh installs the VM testbed)"
done

cache=$(vm_cache_dir)
t0=$SECONDS
# shellcheck disable=SC2317  # called through vm_with_lock
prepare() {
  local ktree base
  ktree=$(bash "$here/fetch-kernel.sh" "${kernel_args[@]}") || return $?
  base=$(bash "$here/build-base.sh" "$ktree") || return $?
  printf '%s\n%s\n' "$ktree" "$base"
}
set +e
prepared=$(vm_with_lock "$cache" prepare)
rc=$?
set -e
((rc == 0)) || exit "$rc"
ktree=$(sed -n 1p <<<"$prepared")
base=$(sed -n 2p <<<"$prepared")
vm_log "kernel $(<"$ktree/kernel.release") ($(cut -d' ' -f3 "$ktree/deb.sha256")), base $(basename "$base"), ready in $((SECONDS - t0)) s"

# --- Overlay: /init, guest tests and libs, project binaries and their libs -------
if [[ -d $build_dir ]]; then
  work=$build_dir/tests/vm
else
  work=$cache/run
fi
mkdir -p "$work/logs"
# Per-run scratch (overlay tree, initrd), so two runs on one build dir do not clash.
scratch=$(mktemp -d "$work/run.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
overlay=$scratch/overlay
mkdir -p "$overlay/vm/tests" "$overlay/vm/lib" "$overlay/opt/nfsrdma/bin"
install -m 0755 "$guest/init" "$overlay/init"
cp "$guest"/lib/*.sh "$overlay/vm/lib/"
for f in "${tests[@]}"; do install -m 0755 "$f" "$overlay/vm/tests/"; done
shopt -s nullglob
bins=()
for b in "$build_dir"/bin/nfsrdma-*; do
  [[ -f $b && -x $b ]] && bins+=("$b")
done
shopt -u nullglob
if ((${#bins[@]})); then
  cp "${bins[@]}" "$overlay/opt/nfsrdma/bin/"
  # Debug info is most of their size and the guest unpacks every byte under
  # emulation; keep the build dir's copies for debugging.
  if command -v strip >/dev/null; then
    strip --strip-debug "$overlay"/opt/nfsrdma/bin/* 2>/dev/null || true
  fi
  # Their libraries (e.g. yaml-cpp, boost, libnfs) may not be in the base;
  # copied to the usr-merged location the loader searches.
  while IFS= read -r lib; do
    [[ -e $lib ]] || continue
    case $lib in /lib/* | /lib64/*) dst=/usr$lib ;; *) dst=$lib ;; esac
    mkdir -p "$overlay$(dirname "$dst")"
    cp -L "$lib" "$overlay$dst"
  done < <(for b in "${bins[@]}"; do ldd "$b" 2>/dev/null; done | awk '
      /=>[ \t]*\// { sub(/.*=>[ \t]*/, ""); sub(/[ \t]+\(0x.*/, ""); print; next }
      /^[ \t]*\// { sub(/^[ \t]*/, ""); sub(/[ \t]+\(0x.*/, ""); print }' | sort -u)
  vm_log "overlay: ${#bins[@]} project binaries from $build_dir/bin"
else
  vm_log "overlay: no $build_dir/bin/nfsrdma-* yet (tests that need them skip)"
fi
initrd=$scratch/initrd.img
(cd "$overlay" && find . -mindepth 1 | LC_ALL=C sort |
  cpio --create --format=newc --owner=0:0 --quiet) | zstd -q -3 >"$scratch/overlay.cpio.zst"
cat "$base" "$scratch/overlay.cpio.zst" >"$initrd"

# --- Boot -------------------------------------------------------------------------
# Default: boot allowance plus every selected test's limit, capped so the
# whole run stays inside ctest's TIMEOUT (tests/vm/CMakeLists.txt).
if [[ -z $vm_timeout ]]; then
  vm_timeout=90
  for l in "${limits[@]}"; do vm_timeout=$((vm_timeout + l + 15)); done
  ((vm_timeout <= 1500)) || vm_timeout=1500
fi
# no_timer_check: on a loaded host TCG delivers the first timer ticks late and
# the kernel's IO-APIC timer check panics ("IO-APIC + timer doesn't work!").
# tsc=reliable: TCG's TSC follows the host clock, but the clocksource watchdog
# compares it with an emulated HPET whose reads are delayed on a loaded host,
# marks the TSC unstable in some boots and falls back to the HPET, whose every
# read is a trapped MMIO access: timing-heavy guest tests (perftest, link)
# then measure different clocks from boot to boot.
append="console=ttyS0 panic=-1 mitigations=off no_timer_check clocksource=tsc tsc=reliable quiet loglevel=4 rdinit=/init$guest_args"
qemu=("$qemu_bin" -machine q35 -accel tcg,thread=multi -cpu max -m 2G -smp 2
  -nographic -no-reboot -nic none -kernel "$ktree/vmlinuz" -initrd "$initrd")

if ((shell)); then
  vm_log "interactive guest: Ctrl-A x quits qemu; 'exit' in the shell powers off"
  # --foreground: qemu keeps the terminal; the limit only bounds a forgotten session.
  set +e
  timeout --foreground "${NFSRDMA_VM_SHELL_TIMEOUT:-14400}" "${qemu[@]}" \
    -append "$append${only:+ nfsrdma.test=$only} nfsrdma.shell=1"
  exit $?
fi

# The guest kernel sometimes dies of the emulation, not of a test: now and
# then TCG runs a stale translation of kernel text that the boot's code
# patching changed ("Oops: int3" in sched_clock_cpu at boot, seen with
# Debian 12's qemu 7.2), and once a "double fault" in soft-RoCE's receive
# path in the middle of the link comparison. A boot whose kernel crashed
# and powered off by itself (not a hang the timeout killed) is followed by
# one more boot that runs the tests with no RESULT yet, the one that was
# running included; the verdict takes each test's line from the boot that
# ran it and prints a NOTE naming the crash. A second crash, or a test that
# fails in the second boot, fails the run as always.
retried=""
first_log=""
run_only=$only
for boot in 1 2; do
  stamp=$(date +%Y%m%d-%H%M%S)
  log=$work/logs/console-$stamp-$boot.log
  # Keep the 20 newest logs.
  find "$work/logs" -name 'console-2*.log' | sort -r | tail -n +20 | xargs -r rm -f
  boot_append=$append
  [[ -n $run_only ]] && boot_append+=" nfsrdma.test=$run_only"
  ((boot == 1)) || boot_append+=" nfsrdma.boot=$boot"
  if ((boot == 1)); then
    vm_log "booting (timeout ${vm_timeout}s): ${#tests[@]} guest test(s); console log $log"
  else
    vm_log "booting again (timeout ${vm_timeout}s) for $run_only; console log $log"
  fi
  boot0=$SECONDS
  set +e
  # Line-buffered clean-up of the serial stream: CRs and the firmware's
  # terminal escape sequences go, so the log greps cleanly.
  timeout -k 10 "$vm_timeout" "${qemu[@]}" -append "$boot_append" </dev/null 2>&1 |
    sed -u -e 's/\r//g' -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\x1bc//g' | tee "$log"
  qrc=${PIPESTATUS[0]}
  set -e
  ln -sfn "$(basename "$log")" "$work/logs/console-latest.log"
  elapsed=$((SECONDS - boot0))
  crash=$(grep -m1 -E 'Kernel panic|BUG: |Oops: ' "$log" || true)
  if ((boot == 1 && qrc != 124 && qrc != 137)) && [[ -n $crash ]] && ! grep -q 'RESULT setup FAIL' "$log"; then
    left=()
    for name in "${names[@]}"; do
      grep -q -E "RESULT $name (PASS|FAIL|SKIP) [0-9.]+" "$log" || left+=("$name")
    done
    if ((${#left[@]})); then
      run_only=$(IFS=,; echo "${left[*]}")
      first_log=$log
      retried="the first boot's kernel crashed ($crash; $log); ${left[*]} ran in a second boot"
      vm_log "$retried"
      continue
    fi
  fi
  break
done
# --- Verdict -----------------------------------------------------------------------
status=0
echo
echo "== VM testbed results (boot to poweroff ${elapsed} s, total $((SECONDS - t0)) s)"
[[ -z $retried ]] || echo "NOTE  $retried"
if grep -q 'RESULT setup FAIL' "$log"; then
  echo "FAIL  setup (guest /init could not set up the testbed; see the log)"
  status=1
fi
for name in "${names[@]}"; do
  line=$(grep -E "RESULT $name (PASS|FAIL|SKIP) [0-9.]+" "$log" | tail -n1 || true)
  if [[ -z $line && -n $first_log ]]; then
    line=$(grep -E "RESULT $name (PASS|FAIL|SKIP) [0-9.]+" "$first_log" | tail -n1 || true)
  fi
  if [[ -z $line ]]; then
    echo "FAIL  $name (no RESULT line: the guest crashed, hung or timed out before it)"
    status=1
    continue
  fi
  verdict=$(awk '{ print $2 }' <<<"${line#*RESULT }")
  secs=$(awk '{ print $3 }' <<<"${line#*RESULT }")
  printf '%-5s %s (%s s)\n' "$verdict" "$name" "$secs"
  if [[ $verdict == FAIL ]]; then
    status=1
    # Its own words under it: CI's record keeps the summary, not the whole log.
    why=$(grep -a -m1 "^FAIL $name: " "$log" || true)
    [[ -z $why ]] || printf '      %s\n' "${why:0:600}"
  fi
done
if ((qrc == 124 || qrc == 137)); then
  echo "FAIL  the VM timed out after ${vm_timeout} s"
  status=1
elif ((qrc != 0)); then
  echo "FAIL  qemu exited with status $qrc"
  status=1
fi
panic=$(grep -m1 -E 'Kernel panic|BUG: |Oops: ' "$log" || true)
if [[ -n $panic ]]; then
  echo "FAIL  guest kernel: $panic"
  status=1
fi
if ! grep -q 'nfsrdma-vm: done, powering off' "$log"; then
  echo "FAIL  the guest did not finish its run (no power-off line)"
  status=1
fi
((status == 0)) && echo "vm: all guest tests passed" || echo "vm: FAILED"
echo "console log: $log"
exit "$status"
