#!/usr/bin/env bash
# Why: the Debian packages are how a cluster installs nfsrdma, so they are
# built from this build and used as a user would, on this host, failing with
# the step that broke:
#  1. cpack builds nfsrdma, libnfsrdma-client0 and libnfsrdma-client-dev;
#     lintian finds no error; the dependencies are the binaries' own
#     (dpkg-shlibdeps) and the library has its shlibs and ldconfig trigger;
#  2. dpkg -i installs them; the tools run from /usr; every man page is
#     there and names every option of the --help it documents; the URL
#     page names the keys of nfsrdma-client --help and no others, the YAML
#     page holds the example config, the library page every entry point of
#     Client.h; bash completes the tools' commands and options;
#  3. examples/ builds against /usr with find_package and with pkg-config
#     (no paths given) and round-trips a file through nfs-ganesha served by
#     /usr/sbin/nfsrdma-server;
#  4. dpkg -r removes every file the packages brought, and dpkg -P their
#     records.
# It refuses to run when one of the packages is already installed (it would
# remove the user's), and purges what it installed on any exit.
# Usage: deb-package.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=${1:?usage: deb-package.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: deb-package.sh BUILD_DIR SOURCE_DIR}
work=$(mktemp -d /tmp/nfsrdma-deb.XXXXXX)
packages=(nfsrdma libnfsrdma-client0 libnfsrdma-client-dev)
installed=0
# shellcheck source=tests/integration/install/lib.sh
. "$src/tests/integration/install/lib.sh"
cleanup() {
  stop_serving
  ((installed == 0)) || dpkg -P "${packages[@]}" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
if [ "$(id -u)" != 0 ]; then
  [ "${NFSRDMA_REQUIRE_REAL:-0}" != 1 ] || fail "dpkg -i needs root, and NFSRDMA_REQUIRE_REAL=1"
  echo "SKIP deb_package: dpkg -i needs root"
  exit 77
fi
is_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }
for p in "${packages[@]}"; do
  ! is_installed "$p" || fail "$p is installed on this host already; this test installs and removes its own (dpkg -P $p first)"
done

step "cpack: the packages of $build"
logged "$work/cpack.log" cpack --config "$build/CPackConfig.cmake" -B "$work/debs"
version=0.1.0-1
debs=()
for p in "${packages[@]}"; do
  deb=$work/debs/${p}_${version}_amd64.deb
  [ -f "$deb" ] || fail "cpack made no $(basename "$deb"): $(ls "$work/debs")"
  debs+=("$deb")
done
dpkg-deb -f "${debs[0]}" Depends | grep -q 'libibverbs1 (>=' ||
  fail "nfsrdma's Depends lacks what dpkg-shlibdeps finds: $(dpkg-deb -f "${debs[0]}" Depends)"
dpkg-deb -f "${debs[2]}" Depends | grep -q "libnfsrdma-client0 (= $version)" ||
  fail "libnfsrdma-client-dev does not depend on its library: $(dpkg-deb -f "${debs[2]}" Depends)"
dpkg-deb --ctrl-tarfile "${debs[1]}" | tar -xO ./shlibs | grep -q "^libnfsrdma-client 0 libnfsrdma-client0" ||
  fail "libnfsrdma-client0 has no shlibs entry for libnfsrdma-client.so.0"
dpkg-deb --ctrl-tarfile "${debs[1]}" | tar -xO ./triggers | grep -q "^activate-noawait ldconfig" ||
  fail "libnfsrdma-client0 lacks the ldconfig trigger"
lintian --fail-on error "${debs[@]}" >"$work/lintian.log" 2>&1 || {
  cat "$work/lintian.log" >&2
  fail "lintian reports errors"
}
echo "lintian: no errors; $(grep -c '^W:' "$work/lintian.log" || true) warnings"

step "dpkg -i"
installed=1
logged "$work/dpkg-i.log" dpkg -i "${debs[@]}"
files=$(dpkg -L "${packages[@]}" | while read -r f; do [ -d "$f" ] || echo "$f"; done)
for tool in /usr/bin/nfsrdma-bench /usr/bin/nfsrdma-client /usr/sbin/nfsrdma-server; do
  out=$("$tool" --version 2>&1) || fail "$tool --version: $out"
done

step "the man pages name every option of their --help"
# page:command words
pages="nfsrdma-bench:nfsrdma-bench nfsrdma-client:nfsrdma-client nfsrdma-server:nfsrdma-server
nfsrdma-client-mount:nfsrdma-client@mount nfsrdma-client-doctor:nfsrdma-client@doctor"
for c in devices link anchor file compare aggregate kube tune; do
  pages="$pages nfsrdma-bench-$c:nfsrdma-bench@$c"
done
for entry in $pages; do
  page=${entry%%:*}
  cmd=${entry#*:}
  man -w "$page" >/dev/null 2>&1 || fail "man finds no page $page"
  text=$(MANWIDTH=1000 LC_ALL=C man -P cat "$page" 2>/dev/null)
  # shellcheck disable=SC2086 # the command's words split at @
  for opt in $(${cmd//@/ } --help 2>&1 | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
    grep -q -- "$opt" <<<"$text" || fail "man $page does not name $opt of '${cmd//@/ } --help'"
  done
done
man -P cat nfsrdma-bench 2>/dev/null | grep -q "nfsrdma-bench-tune(1)" ||
  fail "man nfsrdma-bench does not point at its commands' pages"

step "the pages of sections 5 and 3 agree with --help, the example config and Client.h"
url_page=$(MANWIDTH=1000 LC_ALL=C man -P cat 5 nfsrdma-url 2>/dev/null) || fail "man 5 nfsrdma-url"
help_keys=$(nfsrdma-client --help | sed -n '/^URL:/,/^$/s/^  \([a-z-]*\)=.*/\1/p' | sort -u)
[ -n "$help_keys" ] || fail "no URL keys in nfsrdma-client --help"
# The page's keys: the tag lines of its KEYS section (several on one line).
page_keys=$(sed -n '/^KEYS/,/^[A-Z]/p' <<<"$url_page" | grep -E '^ {7}[a-z]' |
  grep -oE '[a-zA-Z][a-zA-Z-]*=' | tr -d = | sort -u)
for key in $help_keys; do
  grep -qx "$key" <<<"$page_keys" || fail "man 5 nfsrdma-url does not name the URL key $key="
done
for key in $page_keys; do
  grep -qx "$key" <<<"$help_keys" || fail "man 5 nfsrdma-url names $key=, which nfsrdma-client --help does not"
done
# The YAML page's example is the installed example config, byte for byte.
yaml_page=$(man -w 5 nfsrdma-server.yaml) || fail "man finds no nfsrdma-server.yaml(5)"
diff <(zcat "$yaml_page" | sed -n '/^\.nf$/,/^\.fi$/p' | sed '1d;$d' | sed 's/^\\&//; s/\\e/\\/g') \
  /usr/share/doc/nfsrdma/examples/server.example.yaml >"$work/yaml.diff" ||
  fail "nfsrdma-server.yaml(5) differs from server.example.yaml: $(head -20 "$work/yaml.diff")"
lib_page=$(MANWIDTH=1000 LC_ALL=C man -P cat 3 libnfsrdma-client 2>/dev/null) || fail "man 3 libnfsrdma-client"
entries=$(grep -oE '(virtual|static) [^(]*[ *&]([a-zA-Z]+)\(' /usr/include/nfsrdma/client/Client.h |
  sed -E 's/.*[ *&]([a-zA-Z]+)\($/\1/' | sort -u)
[ "$(wc -w <<<"$entries")" -ge 20 ] || fail "Client.h's entry points were not found: $entries"
for e in $entries isBusy; do
  grep -q "\b$e\b" <<<"$lib_page" || fail "man 3 libnfsrdma-client does not name Client::$e"
done

step "bash completion from /usr/share/bash-completion"
# complete_words WORD...: what Tab offers after these words (the last is the
# one being completed).
complete_words() {
  bash -c '. /usr/share/bash-completion/completions/nfsrdma-bench
    COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _nfsrdma; echo "${COMPREPLY[*]}"' _ "$@"
}
[ "$(complete_words nfsrdma-bench tu)" = tune ] || fail "nfsrdma-bench tu<Tab>: $(complete_words nfsrdma-bench tu)"
[ "$(complete_words nfsrdma-bench tune --versus-p)" = --versus-pairs ] ||
  fail "nfsrdma-bench tune --versus-p<Tab>: $(complete_words nfsrdma-bench tune --versus-p)"
[ "$(complete_words nfsrdma-server --root /x ro)" = rollback ] ||
  fail "nfsrdma-server --root /x ro<Tab>: $(complete_words nfsrdma-server --root /x ro)"
for tool in nfsrdma-client nfsrdma-server; do
  [ -f "/usr/share/bash-completion/completions/$tool" ] || fail "no bash completion for $tool"
done

step "examples/ against /usr, through find_package and pkg-config"
build_examples -DCMAKE_FIND_DEBUG_MODE=OFF # no prefix: /usr, as a user would
needs=$(ldd "$work/ex/roundtrip")
loaded=$(sed -n 's/.*libnfsrdma-client\.so\.0 => \([^ ]*\).*/\1/p' <<<"$needs")
# /lib is /usr/lib on a merged-/usr system: compare where the links lead.
[ "$(readlink -f "${loaded:-/nonexistent}")" = /usr/lib/libnfsrdma-client.so.0.1.0 ] ||
  fail "roundtrip does not load the package's library: $needs"
roundtrip_all /usr/sbin/nfsrdma-server "$work/ex/roundtrip" "$work/ex/roundtrip-static" \
  "$work/pc/roundtrip"
stop_serving

step "dpkg -r, dpkg -P: nothing of the packages left"
logged "$work/dpkg-r.log" dpkg -r "${packages[@]}"
left=$(while read -r f; do [ ! -e "$f" ] || echo "$f"; done <<<"$files")
[ -z "$left" ] || fail "dpkg -r left: $left"
for d in /usr/include/nfsrdma /usr/lib/cmake/nfsrdma /usr/share/doc/nfsrdma; do
  [ ! -e "$d" ] || fail "dpkg -r left $d"
done
logged "$work/dpkg-p.log" dpkg -P "${packages[@]}"
installed=0
for p in "${packages[@]}"; do
  ! is_installed "$p" || fail "$p is still installed"
done
echo "removed: $(wc -l <<<"$files") files, none left"
echo "PASS deb_package"
