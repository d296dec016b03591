#!/usr/bin/env bash
# scripts/check-include-cycles.sh on two small trees of its own: one whose
# folders include each other in a ring (exit 1, the ring and its includes
# named) and the same tree with the ring broken (exit 0).
set -euo pipefail
script=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)/scripts/check-include-cycles.sh
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/scripts" "$tree/lib/a" "$tree/lib/b" "$tree/lib/c" "$tree/other"
cp "$script" "$tree/scripts/"
echo '#include "lib/b/B.h"' >"$tree/lib/a/A.h"
printf '#include "lib/c/C.h"\n#include "other/O.h"\n' >"$tree/lib/b/B.h"
echo '#include "lib/a/A.h"  // closes the ring' >"$tree/lib/c/C.cpp"
echo '#include "lib/a/A.h"' >"$tree/other/O.h"

fail() { echo "FAIL: $*" >&2; exit 1; }
status=0
out=$(bash "$tree/scripts/check-include-cycles.sh" lib 2>&1) || status=$?
[[ $status -eq 1 ]] || fail "a ring: exit $status, expected 1: $out"
grep -q 'include cycle between folders: .*lib/a' <<<"$out" || fail "the ring is not named: $out"
grep -q 'lib/c -> lib/a: lib/c/C.cpp: #include "lib/a/A.h"' <<<"$out" || fail "its include is not shown: $out"
grep -q 'other' <<<"$out" && fail "a folder outside the DIRs given counts: $out"

rm "$tree/lib/c/C.cpp"
out=$(bash "$tree/scripts/check-include-cycles.sh" lib 2>&1) || fail "no ring: exit $?: $out"
grep -q 'no folder-level include cycles in: lib' <<<"$out" || fail "no ring: $out"

status=0
bash "$tree/scripts/check-include-cycles.sh" nosuchdir >/dev/null 2>&1 || status=$?
[[ $status -eq 2 ]] || fail "a missing folder: exit $status, expected 2"
echo "check-include-cycles.sh: ring found, no ring passes, bad argument refused"
