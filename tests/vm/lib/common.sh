# Shared helpers for the host side of the VM testbed (sourced, not run).
# Why: fetch-kernel.sh, build-base.sh and run.sh agree on one cache layout, one
# way to report a missing capability (skip, or fail under NFSRDMA_REQUIRE_REAL=1)
# and one lock, so a second run waits instead of corrupting a half-built cache.

# Exit code ctest treats as "skipped" (SKIP_RETURN_CODE in tests/vm/CMakeLists.txt).
VM_SKIP_RC=77

vm_log() { printf 'vm: %s\n' "$*" >&2; }

vm_die() {
  printf 'vm: error: %s\n' "$*" >&2
  exit 1
}

# A capability the testbed needs is missing on this host: skip with one line,
# or fail when CI demands the real thing.
vm_missing() {
  if [[ ${NFSRDMA_REQUIRE_REAL:-0} == 1 ]]; then
    printf 'vm: FAIL (NFSRDMA_REQUIRE_REAL=1): %s\n' "$*" >&2
    exit 1
  fi
  printf 'vm: SKIP: %s\n' "$*" >&2
  exit "$VM_SKIP_RC"
}

# The cache root: $NFSRDMA_VM_CACHE, else /var/cache/nfsrdma-vm when writable
# (root, CI), else the user's XDG cache. Never inside the source tree.
vm_cache_dir() {
  local dir=${NFSRDMA_VM_CACHE:-}
  if [[ -z $dir ]]; then
    if mkdir -p /var/cache/nfsrdma-vm 2>/dev/null && [[ -w /var/cache/nfsrdma-vm ]]; then
      dir=/var/cache/nfsrdma-vm
    else
      dir=${XDG_CACHE_HOME:-$HOME/.cache}/nfsrdma-vm
    fi
  fi
  mkdir -p "$dir" || vm_die "cannot create cache dir $dir"
  printf '%s\n' "$dir"
}

# Runs "$@" holding the cache lock (bounded wait), so concurrent runs serialise
# the fetch and build steps.
vm_with_lock() {
  local cache=$1
  shift
  (
    exec 9>"$cache/.lock"
    flock -w "${NFSRDMA_VM_LOCK_WAIT:-900}" 9 || vm_die "cache lock $cache/.lock busy for too long"
    "$@"
  )
}
