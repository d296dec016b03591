#!/usr/bin/env bash
# Checks that every C/C++ file in git is formatted as .clang-format says
# (clang-format from Debian 12, version 14). Prints each file that differs and
# exits 1 if any does; --fix rewrites them in place instead.
#
#   scripts/check-format.sh [--fix]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
fix=0
case ${1:-} in
  "") ;;
  --fix) fix=1 ;;
  *) echo "usage: $0 [--fix]" >&2; exit 2 ;;
esac
command -v clang-format >/dev/null || { echo "$0: clang-format is not installed (scripts/install-deps.sh)" >&2; exit 1; }

mapfile -d '' files < <(git ls-files -z -- '*.cpp' '*.h' '*.cc' '*.hpp')
if [[ $fix -eq 1 ]]; then
  printf '%s\0' "${files[@]}" | xargs -0 -r -P 2 -n 16 clang-format -i
  exit 0
fi
# clang-format names each file that differs in "FILE:LINE:COL: error: ..." lines.
mapfile -t differ < <(printf '%s\0' "${files[@]}" |
  { xargs -0 -r -n 32 clang-format --dry-run --Werror 2>&1 || true; } |
  sed -n -E 's/^(.+):[0-9]+:[0-9]+: error: .*/\1/p' | sort -u)
if [[ ${#differ[@]} -gt 0 ]]; then
  printf 'not formatted as .clang-format says: %s\n' "${differ[@]}" >&2
  echo "$0: ${#differ[@]} of ${#files[@]} files differ; scripts/check-format.sh --fix rewrites them" >&2
  exit 1
fi
echo "format: ${#files[@]} files as .clang-format says"
