#!/usr/bin/env bash
# The house rules a reader relies on, checked from the code itself:
#  - no folder-level include cycles in the code's folders (check-include-cycles.sh);
#  - no source file over 700 lines outside tests/ (one concern per file);
#  - functions over 60 lines are listed (read-at-once size), not refused.
# Exit 1 when a rule is broken, 0 otherwise; the counts are printed either way.
#
#   scripts/check-house.sh [--functions]   (--functions also lists each long function)
#
# Function lengths come from Universal Ctags' end: field (Debian's
# universal-ctags); without it they are skipped and the script says so.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
list_functions=0
case ${1:-} in
  "") ;;
  --functions) list_functions=1 ;;
  *) echo "usage: $0 [--functions]" >&2; exit 2 ;;
esac
readonly kMaxFileLines=700 kMaxFunctionLines=60
folders=()
for d in util counters hostcheck verbs client server bench; do [[ -d $d ]] && folders+=("$d"); done
status=0

bash scripts/check-include-cycles.sh "${folders[@]}" || status=1

mapfile -t sources < <(git ls-files -- "${folders[@]/%//*.cpp}" "${folders[@]/%//*.h}")
long_files=$(wc -l "${sources[@]}" | awk -v max=$kMaxFileLines '$2 != "total" && $1 > max { print "  " $1 " " $2 }')
if [[ -n $long_files ]]; then
  echo "files over $kMaxFileLines lines:"
  echo "$long_files"
  status=1
fi
echo "files over $kMaxFileLines lines: $(grep -c . <<<"$long_files" || true) of ${#sources[@]}"

if command -v ctags >/dev/null && ctags --version 2>/dev/null | grep -q Universal; then
  long_functions=$(ctags -x --_xformat='%F %n %{end} %N' --kinds-c++=f --fields=+ne -f - "${sources[@]}" 2>/dev/null |
    awk -v max=$kMaxFunctionLines '$3 != "" && $3 - $2 + 1 > max { len = $3 - $2 + 1; at = $1 ":" $2; sub(/^[^ ]+ [^ ]+ [^ ]+ /, ""); print "  " len " " at " " $0 }' |
    sort -rn)
  echo "functions over $kMaxFunctionLines lines: $(grep -c . <<<"$long_functions" || true)"
  [[ $list_functions -eq 1 && -n $long_functions ]] && echo "$long_functions"
else
  echo "functions over $kMaxFunctionLines lines: not counted (needs universal-ctags)"
fi
exit $status
