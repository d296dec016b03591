#!/usr/bin/env bash
# Runs clang-tidy (Debian 12's, version 14) with the repository's .clang-tidy
# over every source file of the project outside tests/, as the build compiles
# it (BUILD_DIR/compile_commands.json, written by every configure). Each
# finding is an error; exit 1 if there is any.
#
#   scripts/check-tidy.sh [BUILD_DIR]   (default: build)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${1:-build}
db=$build/compile_commands.json
[[ -f $db ]] || { echo "$0: $db: not found; configure first (scripts/build.sh)" >&2; exit 2; }
command -v clang-tidy >/dev/null || { echo "$0: clang-tidy is not installed (scripts/install-deps.sh)" >&2; exit 1; }

mapfile -t files < <(python3 - "$db" "$root" <<'PY'
import json, os, sys
db, root = sys.argv[1], sys.argv[2]
seen = set()
for entry in json.load(open(db)):
    path = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
    rel = os.path.relpath(path, root)
    if rel.split(os.sep)[0] in ("util", "counters", "hostcheck", "verbs", "client", "server", "bench") and rel not in seen:
        seen.add(rel)
        print(rel)
PY
)
echo "clang-tidy: ${#files[@]} files"
# --quiet drops the per-file banner; a finding fails that file's clang-tidy.
if printf '%s\0' "${files[@]}" | xargs -0 -r -P 2 -n 4 clang-tidy -p "$build" --quiet \
    --extra-arg=-Wno-unknown-warning-option 2>/dev/null; then
  echo "clang-tidy: no findings"
else
  echo "$0: clang-tidy found the problems above (.clang-tidy says which checks run)" >&2
  exit 1
fi
