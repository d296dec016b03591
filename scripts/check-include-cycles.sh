#!/usr/bin/env bash
# Reports folder-level include cycles: folder A includes a header of folder B
# and B (directly or through others) one of A. Layers include downwards
# only; a cycle means two folders are one layer in fact.
#
#   scripts/check-include-cycles.sh DIR...   (folders below the repository root)
#
# Reads the '#include "path"' lines of the C/C++ files below each DIR (paths
# are from the repository root, as the build's include root has them) and
# keeps the edges between folders below the DIRs given. Each cycle is
# printed with the includes that make it; exit status 1 if there is any, 2
# for bad arguments. Needs only grep, sed, sort and tsort (coreutils).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
if [[ $# -eq 0 ]]; then
  echo "usage: $0 DIR... (folders below $root, e.g. client bench)" >&2
  exit 2
fi
dirs=()
for d in "$@"; do
  d=${d%/}
  if [[ ! -d $d ]]; then
    echo "$0: $d: not a folder below $root" >&2
    exit 2
  fi
  dirs+=("$d")
done

# "from-folder to-folder file: include line", one per include between two
# folders below the DIRs.
includes=$(
  find "${dirs[@]}" -type f \( -name '*.h' -o -name '*.hpp' -o -name '*.cc' -o -name '*.cpp' \) -print0 |
    { xargs -0 -r grep -H -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]+/[^"]+"' || true; } |
    sed -E 's|^(([^:]*)/[^/:]*):[[:space:]]*#[[:space:]]*include[[:space:]]*"(([^"]*)/[^"/]*)".*$|\2 \4 \1: #include "\3"|' |
    while read -r from to rest; do
      [[ $from == "$to" ]] && continue
      for d in "${dirs[@]}"; do
        if [[ $to == "$d" || $to == "$d"/* ]]; then
          echo "$from $to $rest"
          break
        fi
      done
    done | sort -u
)

# tsort names the folders of each loop it finds, one "tsort: folder" line each.
loops=$(cut -d' ' -f1,2 <<<"$includes" | sort -u | tsort 2>&1 >/dev/null || true)
if [[ -z $loops ]]; then
  echo "no folder-level include cycles in: ${dirs[*]}"
  exit 0
fi

count=0
members=()
report() {
  ((${#members[@]} > 0)) || return 0
  count=$((count + 1))
  echo "include cycle between folders: ${members[*]}"
  # The includes between members of this cycle, as the places to look.
  while read -r from to rest; do
    local a=0 b=0
    for m in "${members[@]}"; do
      [[ $m == "$from" ]] && a=1
      [[ $m == "$to" ]] && b=1
    done
    ((a && b)) && echo "  $from -> $to: $rest"
  done <<<"$includes"
  members=()
}
while read -r line; do
  case $line in
    *"input contains a loop:"*) report ;;
    "tsort: "*) members+=("${line#tsort: }") ;;
  esac
done <<<"$loops"
report
echo "$count folder-level include cycle(s) in: ${dirs[*]}" >&2
exit 1
