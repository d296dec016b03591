# shellcheck shell=bash
# Sourced by shell tests and benchmarks that need an NFS server on this host:
#
#   serve_loopback SERVER_BIN EXPORT_DIR WORK_DIR
#
# starts nfs-ganesha through `SERVER_BIN serve` on 127.0.0.1 at a free port,
# exporting EXPORT_DIR as /export, read-write to 127.0.0.1 with root not
# squashed (the tests run as root), its config and state under WORK_DIR.
# Sets SERVE_PID and SERVE_PORT and returns 0 once serve says ready; returns
# 1 with serve's log on stderr when it does not within 90 s. The caller
# stops it: kill "$SERVE_PID".
serve_loopback() {
  local bin=$1 export_dir=$2 work=$3
  mkdir -p "$work"
  cat >"$work/serve.yaml" <<YAML
exports:
  - path: $export_dir
    pseudo: /export
    clients:
      - host: 127.0.0.1
        access: rw
        squash: no_root_squash
        insecure: true
transports:
  bind_address: 127.0.0.1
YAML
  "$bin" serve --port 0 --work-dir "$work/serve" "$work/serve.yaml" >"$work/serve.log" 2>&1 &
  SERVE_PID=$!
  local _
  for _ in $(seq 1 180); do
    grep -q '^ready;' "$work/serve.log" && break
    kill -0 "$SERVE_PID" 2>/dev/null || break
    sleep 0.5
  done
  SERVE_PORT=$(sed -n 's/^serving with nfs-ganesha pid [0-9]* on 127\.0\.0\.1:\([0-9]*\)$/\1/p' \
    "$work/serve.log")
  if ! grep -q '^ready;' "$work/serve.log" || [ -z "$SERVE_PORT" ]; then
    cat "$work/serve.log" >&2
    echo "serve_loopback: $bin serve did not say ready on 127.0.0.1 within 90 s" >&2
    return 1
  fi
}
