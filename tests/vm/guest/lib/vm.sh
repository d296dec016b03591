# Guest helpers for the VM testbed (sourced by /init and by guest tests; dash).
# Why: every test needs the same bounded readiness waits, the GID lookup and a
# way to fail loudly with its own name; one copy keeps them consistent.
# In a test: . "$VM_LIB/vm.sh"

# Fails the current test with a message naming it.
vm_fail() {
  echo "FAIL ${VM_TEST:-setup}: $*" >&2
  exit 1
}

# Skips the current test (exit 77) with a reason; the host reports SKIP.
vm_skip() {
  echo "SKIP ${VM_TEST:-setup}: $*" >&2
  exit 77
}

# vm_uptime: whole seconds since boot (no fork: TCG makes every fork costly).
vm_uptime() {
  read -r _vu_up _vu_idle </proc/uptime
  echo "${_vu_up%.*}"
}

# vm_wait SECONDS WHAT CMD...: runs CMD every 0.1 s until it succeeds, for at
# most SECONDS of wall time (and at most 20 tries per second); on timeout
# prints WHAT and returns 1. Never sleeps when already ready.
vm_wait() {
  read -r _vw_up _vw_idle </proc/uptime
  _vw_end=$((${_vw_up%.*} + $1))
  _vw_max=$(($1 * 20))
  _vw_what=$2
  shift 2
  _vw_i=0
  while [ "$_vw_i" -lt "$_vw_max" ]; do
    if "$@" >/dev/null 2>&1; then return 0; fi
    read -r _vw_up _vw_idle </proc/uptime
    [ "${_vw_up%.*}" -lt "$_vw_end" ] || break
    _vw_i=$((_vw_i + 1))
    sleep 0.1
  done
  echo "timed out after $((_vw_max / 20)) s waiting for: $_vw_what" >&2
  return 1
}

# vm_gid_index DEV IPV4: prints the GID index of DEV port 1 whose GID is the
# RoCE v2 IPv4-mapped GID (::ffff:a.b.c.d) of IPV4; returns 1 if none yet.
vm_gid_index() {
  _gi_dev=$1
  _gi_hex=$(echo "$2" | awk -F. '{ printf "%02x%02x:%02x%02x", $1, $2, $3, $4 }')
  for _gi_path in /sys/class/infiniband/"$_gi_dev"/ports/1/gids/*; do
    _gi_n=${_gi_path##*/}
    read -r _gi_gid <"$_gi_path" 2>/dev/null || continue
    case $_gi_gid in
      *:ffff:"$_gi_hex")
        _gi_type=$(cat "/sys/class/infiniband/$_gi_dev/ports/1/gid_attrs/types/$_gi_n" 2>/dev/null) || continue
        if [ "$_gi_type" = "RoCE v2" ]; then
          echo "$_gi_n"
          return 0
        fi
        ;;
    esac
  done
  return 1
}

# vm_gid_dump DEV: prints the first GID table entries with their types
# (diagnostics when the expected GID is missing).
vm_gid_dump() {
  for _gd_n in 0 1 2 3 4 5; do
    _gd_g=$(cat "/sys/class/infiniband/$1/ports/1/gids/$_gd_n" 2>&1)
    _gd_t=$(cat "/sys/class/infiniband/$1/ports/1/gid_attrs/types/$_gd_n" 2>&1)
    echo "$1 gid[$_gd_n] $_gd_g type $_gd_t"
  done
}

# vm_port_active DEV: true when port 1 of the RDMA device is ACTIVE.
vm_port_active() {
  read -r _pa_state <"/sys/class/infiniband/$1/ports/1/state" 2>/dev/null || return 1
  case $_pa_state in *ACTIVE*) return 0 ;; esac
  return 1
}

# vm_tcp_listening PORT: true when something listens on TCP PORT.
vm_tcp_listening() {
  ss -Hltn "sport = :$1" | grep -q .
}

# vm_rdma_listening PORT: true when an rdma_cm id listens on PORT (rping,
# svcrdma, perftest -R); `rdma resource show cm_id` lists them.
vm_rdma_listening() {
  rdma resource show cm_id 2>/dev/null | grep LISTEN | grep -q ":$1 "
}

# vm_netdev_bytes DEV rx|tx: the netdev byte counter.
vm_netdev_bytes() {
  cat "/sys/class/net/$1/statistics/$2_bytes"
}
