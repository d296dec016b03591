# Our NFSv4.1 client against knfsd in the guest (sourced; dash).
# Why: the same functional checks must pass over TCP and over RPC-over-RDMA;
# only the URL's transport differs. Uses nfsrdma-client from the overlay.

# client_suite PROTO PORT: round trips of 0 B .. 16 MiB both ways (sha256 on
# the server's disk and after reading back), listing, rename, remove, and the
# NFS4ERR_NOENT message, all through nfsrdma-client over PROTO.
client_suite() {
  _proto=$1
  _port=$2
  command -v nfsrdma-client >/dev/null || vm_fail "nfsrdma-client is not in the overlay (build it first)"
  trap 'knfsd_stop' EXIT
  trap 'exit 143' TERM INT
  knfsd_start
  _base="nfs://$SERVER_IP:$_port$KNFSD_EXPORT"
  _q="?proto=$_proto&bind=$CLIENT_IP&timeout=30000"
  for _size in 0 1 4096 1048583 ${CLIENT_SUITE_MAX:-16777216}; do
    head -c "$_size" /dev/urandom >src.bin
    _want=$(sha256sum <src.bin | cut -d' ' -f1)
    timeout 120 nfsrdma-client cp src.bin "$_base/f$_size$_q" || vm_fail "cp to the server ($_size bytes, $_proto)"
    _got=$(sha256sum <"$KNFSD_EXPORT/f$_size" | cut -d' ' -f1)
    [ "$_got" = "$_want" ] || vm_fail "$_size bytes over $_proto: server has sha256 $_got, sent $_want"
    timeout 120 nfsrdma-client cp "$_base/f$_size$_q" back.bin || vm_fail "cp from the server ($_size bytes, $_proto)"
    _got=$(sha256sum <back.bin | cut -d' ' -f1)
    [ "$_got" = "$_want" ] || vm_fail "$_size bytes back over $_proto: sha256 $_got, expected $_want"
    echo "round trip $_size bytes over $_proto: byte-exact"
  done
  timeout 60 nfsrdma-client ls "$_base$_q" >ls.txt || vm_fail "ls over $_proto"
  [ "$(grep -c ' f[0-9]*$' ls.txt)" -eq 5 ] || { cat ls.txt; vm_fail "ls over $_proto does not show the 5 files"; }
  # 64 concurrent 4 KiB writes at random offsets, then every byte read back
  # and checked (the file benchmark's verify pattern), over the same transport.
  timeout 120 nfsrdma-bench file --target "nfs:$_base$_q" --profile 4k-randwrite --iodepth 64 \
    --size 4m --runtime 2 --ramp 0 --verify >randwrite.txt 2>&1 || { cat randwrite.txt; vm_fail "concurrent random writes over $_proto"; }
  grep -q ' 0 mismatches' randwrite.txt || { cat randwrite.txt; vm_fail "random writes over $_proto did not verify"; }
  echo "64 concurrent random 4 KiB writes over $_proto: read back and verified"
  # 1,000 entries: several READDIR rounds, each reply larger than the inline size (RDMA: Reply chunk).
  mkdir -p "$KNFSD_EXPORT/many"
  _i=0
  while [ "$_i" -lt 1000 ]; do
    : >"$KNFSD_EXPORT/many/entry-with-a-longish-name-$_i"
    _i=$((_i + 1))
  done
  timeout 120 nfsrdma-client ls "$_base/many$_q" >many.txt || vm_fail "ls of a 1,000-entry directory over $_proto"
  [ "$(grep -c ' entry-with-a-longish-name-[0-9]*$' many.txt)" -eq 1000 ] ||
    vm_fail "ls over $_proto listed $(wc -l <many.txt) of 1,000 entries"
  rm -rf "$KNFSD_EXPORT/many"
  echo "1,000-entry directory listed completely over $_proto"
  timeout 60 nfsrdma-client rename "$_base/f1$_q" "$_base/renamed$_q" || vm_fail "rename over $_proto"
  [ -f "$KNFSD_EXPORT/renamed" ] && [ ! -e "$KNFSD_EXPORT/f1" ] || vm_fail "rename over $_proto did not happen on the server"
  timeout 60 nfsrdma-client rm "$_base/renamed$_q" || vm_fail "rm over $_proto"
  [ ! -e "$KNFSD_EXPORT/renamed" ] || vm_fail "rm over $_proto left the file"
  # Symbolic links, followed as POSIX calls follow them: a relative one of
  # 4005 bytes (its READLINK reply is over the 4 KiB inline size, so over
  # RDMA it comes in a Reply chunk), an absolute one through the server's
  # pseudo root, and one to a directory in the middle of a path.
  _want=$(sha256sum <"$KNFSD_EXPORT/f4096" | cut -d' ' -f1)
  _long=""
  _i=0
  while [ "$_i" -lt 2000 ]; do
    _long="$_long./"
    _i=$((_i + 1))
  done
  ln -s "${_long}f4096" "$KNFSD_EXPORT/llong"
  ln -s "$KNFSD_EXPORT/f4096" "$KNFSD_EXPORT/labs"
  mkdir -p "$KNFSD_EXPORT/ldir"
  cp "$KNFSD_EXPORT/f4096" "$KNFSD_EXPORT/ldir/inner"
  ln -s ldir "$KNFSD_EXPORT/lto"
  for _link in llong labs lto/inner; do
    _got=$(timeout 60 nfsrdma-client cat "$_base/$_link$_q" | sha256sum | cut -d' ' -f1)
    [ "$_got" = "$_want" ] || vm_fail "cat through the link $_link over $_proto: sha256 $_got, expected $_want"
  done
  timeout 60 nfsrdma-client ls "$_base/llong$_q" >ls-link.txt || vm_fail "ls of a link over $_proto"
  grep -q " $KNFSD_EXPORT/llong -> ${_long}f4096\$" ls-link.txt ||
    { cut -c1-200 ls-link.txt; vm_fail "ls over $_proto does not show the long link's target"; }
  # Directory operations through the link to a directory (knfsd answers a
  # link where a directory belongs its own way), and ".." after it.
  timeout 60 nfsrdma-client mkdir "$_base/lto/made$_q" || vm_fail "mkdir through a link over $_proto"
  [ -d "$KNFSD_EXPORT/ldir/made" ] || vm_fail "mkdir through a link over $_proto did not make ldir/made"
  timeout 60 nfsrdma-client ls "$_base/lto/$_q" >ls-dir.txt || vm_fail "ls of a link to a directory over $_proto"
  grep -q ' inner$' ls-dir.txt && grep -q ' made$' ls-dir.txt ||
    { cat ls-dir.txt; vm_fail "ls of lto/ over $_proto does not list the directory"; }
  timeout 60 nfsrdma-client stat "$_base/lto/made/..$_q" >stat-dir.txt || vm_fail "stat through a link and .. over $_proto"
  grep -q "^FileId: $(stat -c %i "$KNFSD_EXPORT/ldir")[[:space:]]" stat-dir.txt ||
    { cat stat-dir.txt; vm_fail "lto/made/.. over $_proto is not ldir"; }
  timeout 60 nfsrdma-client rm "$_base/lto/made$_q" || vm_fail "rm through a link over $_proto"
  [ ! -e "$KNFSD_EXPORT/ldir/made" ] || vm_fail "rm through a link over $_proto left ldir/made"
  rm -rf "$KNFSD_EXPORT/llong" "$KNFSD_EXPORT/labs" "$KNFSD_EXPORT/lto" "$KNFSD_EXPORT/ldir"
  echo "symbolic links (4005-byte, absolute, to a directory) followed over $_proto"
  if timeout 60 nfsrdma-client cat "$_base/no-such-file$_q" >/dev/null 2>err.txt; then
    vm_fail "cat of a missing file succeeded over $_proto"
  fi
  grep -q "open $KNFSD_EXPORT/no-such-file: NFS4ERR_NOENT (no such file or directory)" err.txt ||
    { cat err.txt; vm_fail "wrong error text over $_proto"; }
  echo "client suite over $_proto: passed"
}
