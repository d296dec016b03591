#!/usr/bin/env bash
# Why: a user installs nfsrdma and links the client library from outside the
# tree; nothing in the build tree proves that works (an internal header the
# public ones include, a layer missing from the library, a .pc or package
# config that points at the build). This installs the build into a staging
# prefix and checks, failing with the step that broke:
#  1. the tools run from the prefix (--version);
#  2. the shared library has its SONAME and needs nothing missing; the
#     public headers are exactly the API's and each compiles alone;
#  3. examples/ builds with find_package (shared and static) and with
#     pkg-config, against the staged tree;
#  4. every example binary round-trips a file through nfs-ganesha, started
#     by the staged nfsrdma-server serve on 127.0.0.1, and names the
#     NFS4ERR_ of an export that does not exist.
# Usage: install-and-link.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=${1:?usage: install-and-link.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: install-and-link.sh BUILD_DIR SOURCE_DIR}
work=$(mktemp -d /tmp/nfsrdma-install.XXXXXX)
# shellcheck source=tests/integration/install/lib.sh
. "$src/tests/integration/install/lib.sh"
trap 'stop_serving; rm -rf "$work"' EXIT

stage=$work/stage
step "cmake --install $build --prefix $stage"
logged "$work/install.log" cmake --install "$build" --prefix "$stage"
pc=$(find "$stage" -name nfsrdma-client.pc)
[ -n "$pc" ] || fail "no nfsrdma-client.pc under $stage"
libdir=$(dirname "$(dirname "$pc")")
inc=$stage/include/nfsrdma

step "the tools run from the prefix"
for tool in bin/nfsrdma-bench bin/nfsrdma-client sbin/nfsrdma-server; do
  out=$("$stage/$tool" --version 2>&1) || fail "$tool --version: $out"
  grep -q "^$(basename "$tool") 0\.1\.0" <<<"$out" || fail "$tool --version said: $out"
done

step "the shared library and the headers"
so=$(readlink -f "$libdir/libnfsrdma-client.so")
[ "$(basename "$so")" = libnfsrdma-client.so.0.1.0 ] || fail "libnfsrdma-client.so points at $so"
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libnfsrdma-client.so.0 ] || fail "SONAME is '$soname', expected libnfsrdma-client.so.0"
[ -e "$libdir/libnfsrdma-client.so.0" ] || fail "no libnfsrdma-client.so.0 link"
# ldd's output is read whole: grep -q stopping early would fail the pipe.
needs=$(ldd "$so")
! grep -q "not found" <<<"$needs" || fail "$so needs a library that is missing: $needs"
[ -f "$libdir/libnfsrdma-client.a" ] || fail "no libnfsrdma-client.a in $libdir"
expected="client/Client.h client/ClientOptions.h client/Error.h client/KernelMounts.h
client/base/Error.h client/base/RpcStats.h client/nfs4/Attributes.h
client/nfs4/Nfs4Constants.h client/nfs4/SessionStats.h"
got=$(cd "$inc" && find . -type f | sed 's|^\./||' | sort | tr '\n' ' ')
want=$(tr ' ' '\n' <<<"$expected" | sed '/^$/d' | sort | tr '\n' ' ')
[ "$got" = "$want" ] || fail "installed headers: $got; expected the API's: $want"
for h in $expected; do
  echo "#include <$h>" | c++ -std=c++20 -fsyntax-only -Wall -Werror -x c++ - -I"$inc" 2>"$work/h.log" ||
    fail "$h does not compile alone: $(cat "$work/h.log")"
done

step "examples/ through find_package and pkg-config, against the staged tree"
PKG_CONFIG_PATH="$libdir/pkgconfig" build_examples -DCMAKE_PREFIX_PATH="$stage"
needs=$(LD_LIBRARY_PATH=$libdir ldd "$work/pc/roundtrip")
grep -q "libnfsrdma-client.so.0 => $libdir/" <<<"$needs" ||
  fail "roundtrip does not load the staged library: $needs"

step "each example round-trips a file through the staged nfsrdma-server serve"
LD_LIBRARY_PATH=$libdir roundtrip_all "$stage/sbin/nfsrdma-server" \
  "$work/ex/roundtrip" "$work/ex/roundtrip-static" "$work/pc/roundtrip"
echo "PASS install_and_link"
