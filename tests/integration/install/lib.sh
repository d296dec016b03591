# shellcheck shell=bash
# What install-and-link.sh and deb-package.sh share: failing with the step
# that broke, building examples/ against an installed nfsrdma both ways, and
# running the example binaries against nfs-ganesha served by the installed
# nfsrdma-server. Sourced; the caller sets `src` (the source tree) and
# `work` (its scratch directory), and cleans up SERVE_PID.
# shellcheck disable=SC2154 # src and work: set by the caller

fail() {
  echo "FAIL $(basename "$0"): $*" >&2
  exit 1
}
step() { echo "== $*"; }
# logged LOG CMD...: runs CMD with its output in LOG, shown when it fails.
logged() {
  local log=$1
  shift
  local rc=0
  "$@" >"$log" 2>&1 || rc=$?
  if ((rc != 0)); then
    cat "$log" >&2
    fail "$* (exit $rc)"
  fi
}

# build_examples [CMAKE_ARGS...]: examples/ with find_package into
# $work/ex (roundtrip, roundtrip-static) and with pkg-config (the caller's
# PKG_CONFIG_PATH) into $work/pc.
build_examples() {
  logged "$work/cmake.log" cmake -S "$src/examples" -B "$work/ex" -G Ninja "$@"
  logged "$work/cmake-build.log" cmake --build "$work/ex"
  mkdir -p "$work/pc"
  logged "$work/make.log" make -C "$work/pc" -f "$src/examples/Makefile"
  local needs
  needs=$(ldd "$work/ex/roundtrip-static")
  ! grep -q libnfsrdma-client <<<"$needs" || fail "roundtrip-static loads libnfsrdma-client.so"
}

# roundtrip_all SERVER_BIN BIN...: SERVER_BIN serve exports $work/export on
# 127.0.0.1; each BIN writes, reads back and removes a file there; the first
# must name the NFS4ERR_ of an export that does not exist.
roundtrip_all() {
  local server=$1 bin name out
  shift
  # shellcheck source=scripts/lib/serve-loopback.sh
  . "$src/scripts/lib/serve-loopback.sh"
  mkdir -p "$work/export"
  serve_loopback "$server" "$work/export" "$work/serving" || fail "$server serve"
  local url=nfs://127.0.0.1:$SERVE_PORT/export
  for bin in "$@"; do
    name=$(basename "$(dirname "$bin")")-$(basename "$bin")
    out=$(timeout 120 "$bin" "$url" "$name.dat" 2>&1) || fail "$bin: $out"
    echo "$out"
    grep -q "wrote 1048576 bytes, read them back" <<<"$out" || fail "$bin said: $out"
    [ ! -e "$work/export/$name.dat" ] || fail "$bin left $name.dat on the export"
  done
  if out=$(timeout 120 "$1" "nfs://127.0.0.1:$SERVE_PORT/nope" 2>&1); then
    fail "$1 against a missing export succeeded: $out"
  fi
  grep -q "NFS4ERR_" <<<"$out" || fail "a missing export's error names no NFS4ERR_: $out"
  echo "missing export: $out"
}

# stop_serving: ends the serve roundtrip_all started (bounded).
stop_serving() {
  [ -n "${SERVE_PID:-}" ] || return 0
  kill "$SERVE_PID" 2>/dev/null || true
  timeout 30 tail --pid="$SERVE_PID" -f /dev/null || kill -9 "$SERVE_PID" 2>/dev/null || true
  SERVE_PID=""
}
