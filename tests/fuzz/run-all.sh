#!/usr/bin/env bash
# Runs every libFuzzer target built in BUILD_DIR/bin (named fuzz_*) for SECONDS
# each, starting from its seed corpus in tests/fuzz/corpus/<name>. Non-zero if
# any target crashed or hung; every target runs either way.
#
# A unit slower than NFSRDMA_FUZZ_TIMEOUT seconds (default 10) counts as a
# failure: libFuzzer's own default (1200 s) would let a hang pass a short run.
# Crash and timeout reproducers are kept in BUILD_DIR/fuzz-artifacts/<name>/.
set -euo pipefail
build=$1 seconds=${2:-20}
unit_timeout=${NFSRDMA_FUZZ_TIMEOUT:-10}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
shopt -s nullglob
targets=("$build"/bin/fuzz_*)
if ((${#targets[@]} == 0)); then
  echo "fuzz: no targets built in $build/bin" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for t in "${targets[@]}"; do
  name=$(basename "$t")
  corpus=$work/$name
  artifacts=$build/fuzz-artifacts/$name
  mkdir -p "$corpus" "$artifacts"
  cp -r "$here/corpus/$name/." "$corpus/" 2>/dev/null || true
  echo "fuzz: $name for ${seconds}s (unit timeout ${unit_timeout}s)"
  if "$t" -max_total_time="$seconds" -timeout="$unit_timeout" -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "$corpus" >"$work/$name.log" 2>&1; then
    grep -E '^#[0-9]+[[:space:]]+DONE' "$work/$name.log" | tail -n 1 || true
  else
    status=1
    echo "fuzz: $name FAILED; reproducers in $artifacts:" >&2
    grep -E 'ERROR: libFuzzer|ERROR: AddressSanitizer|runtime error|SUMMARY' "$work/$name.log" | head -n 5 >&2 || true
    ls "$artifacts" >&2
  fi
done
exit $status
