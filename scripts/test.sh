#!/usr/bin/env bash
# The whole test suite, as CI runs it. First a fast lane that stops at its
# first failure, so a broken change is told in minutes, not after the VM:
#  1. dependencies (idempotent), 2. the format check (scripts/check-format.sh) and
#     the house rules (scripts/check-house.sh: no include cycle, no file over 700 lines),
#  3. release build with warnings as errors, 4. the unit tests.
# Then the slow suites, each run even if one before it failed:
#  5. the unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer,
#  6. a short run of every libFuzzer target (clang),
#  7. integration (nfs-ganesha on loopback) and vm (qemu testbed).
# Integration and VM fixtures fail instead of skipping when NFSRDMA_REQUIRE_REAL=1
# (set here): a green run means the real servers were really used.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh
export NFSRDMA_REQUIRE_REAL=${NFSRDMA_REQUIRE_REAL:-1}

# Each step says when it starts, in seconds since the suite began.
step() { echo "== [${SECONDS} s] $*"; }
lane_start=$SECONDS
step "fast lane: format and house rules"
bash scripts/check-format.sh
bash scripts/check-house.sh

step "fast lane: build (release, -Werror)"
NFSRDMA_BUILD_DIR=$root/build bash scripts/build.sh -DCMAKE_BUILD_TYPE=RelWithDebInfo

step "fast lane: unit tests"
ctest --test-dir "$root/build" -L unit --output-on-failure -j 2
echo "== fast lane passed in $((SECONDS - lane_start)) s"

step "build (address,undefined sanitizers; unit tests)"
NFSRDMA_BUILD_TARGETS=nfsrdma_unit_tests NFSRDMA_BUILD_DIR=$root/build-asan bash scripts/build.sh \
  -DCMAKE_BUILD_TYPE=Debug -DNFSRDMA_SANITIZE=address,undefined

step "build (libFuzzer targets, clang)"
CC=clang CXX=clang++ NFSRDMA_BUILD_TARGETS="$(tr '\n' ' ' <tests/fuzz/targets.txt)" \
  NFSRDMA_BUILD_DIR=$root/build-fuzz bash scripts/build.sh \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNFSRDMA_FUZZ=ON -DNFSRDMA_TESTS=ON

status=0
step "fuzz smoke (${NFSRDMA_FUZZ_SECONDS:=20} s per target)"
bash tests/fuzz/run-all.sh "$root/build-fuzz" "$NFSRDMA_FUZZ_SECONDS" || status=1

step "unit tests under sanitizers"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$root/build-asan" -L unit --output-on-failure -j 2 || status=1

step "clang-tidy (the checks .clang-tidy lists, over the release build's sources)"
bash scripts/check-tidy.sh "$root/build" || status=1

step "integration and vm tests"
ctest --test-dir "$root/build" -LE unit --output-on-failure || status=1
exit $status
