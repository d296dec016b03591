#!/usr/bin/env bash
# The whole test suite, as CI runs it:
#  1. dependencies (idempotent), 2. release build with warnings as errors,
#  3. every ctest label: unit, integration (nfs-ganesha on loopback), vm (qemu testbed),
#  4. the unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer,
#  5. a short run of every libFuzzer target (clang).
# Integration and VM fixtures fail instead of skipping when NFSRDMA_REQUIRE_REAL=1
# (set here): a green run means the real servers were really used.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh
export NFSRDMA_REQUIRE_REAL=${NFSRDMA_REQUIRE_REAL:-1}

echo "== build (release, -Werror)"
NFSRDMA_BUILD_DIR=$root/build bash scripts/build.sh -DCMAKE_BUILD_TYPE=RelWithDebInfo

echo "== build (address,undefined sanitizers; unit tests)"
NFSRDMA_BUILD_TARGETS=nfsrdma_unit_tests NFSRDMA_BUILD_DIR=$root/build-asan bash scripts/build.sh \
  -DCMAKE_BUILD_TYPE=Debug -DNFSRDMA_SANITIZE=address,undefined

echo "== build (libFuzzer targets, clang)"
CC=clang CXX=clang++ NFSRDMA_BUILD_TARGETS="$(tr '\n' ' ' <tests/fuzz/targets.txt)" \
  NFSRDMA_BUILD_DIR=$root/build-fuzz bash scripts/build.sh \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNFSRDMA_FUZZ=ON -DNFSRDMA_TESTS=ON

status=0
echo "== fuzz smoke (${NFSRDMA_FUZZ_SECONDS:=20} s per target)"
bash tests/fuzz/run-all.sh "$root/build-fuzz" "$NFSRDMA_FUZZ_SECONDS" || status=1

echo "== unit tests under sanitizers"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$root/build-asan" -L unit --output-on-failure -j 2 || status=1

echo "== all tests (unit, integration, vm)"
ctest --test-dir "$root/build" --output-on-failure || status=1
exit $status
