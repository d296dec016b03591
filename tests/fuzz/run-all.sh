#!/usr/bin/env bash
# Runs every libFuzzer target built in BUILD_DIR/bin (named fuzz_*) for SECONDS
# each, starting from its seed corpus in tests/fuzz/corpus/<name>. Non-zero on a crash.
set -euo pipefail
build=$1 seconds=${2:-20}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
shopt -s nullglob
targets=("$build"/bin/fuzz_*)
if ((${#targets[@]} == 0)); then
  echo "fuzz: no targets built in $build/bin" >&2
  exit 1
fi
for t in "${targets[@]}"; do
  name=$(basename "$t")
  work=$(mktemp -d)
  cp -r "$here/corpus/$name/." "$work/" 2>/dev/null || true
  echo "fuzz: $name for ${seconds}s"
  "$t" -max_total_time="$seconds" -print_final_stats=1 "$work" 2>&1 | tail -n 3
  rm -rf "$work"
done
