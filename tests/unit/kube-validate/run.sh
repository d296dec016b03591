#!/usr/bin/env bash
# The ctest side of the offline Kubernetes validation (validate.mjs):
#   run.sh rendered NFSRDMA_BENCH  renders every combination of engine
#       (nfs, libnfs, path on a shared and on a per-pod volume), RDMA option
#       (none, --rdma, --rdma --host-network) and controller (Indexed Job,
#       MPIJob), the seed comparison and an --out directory, and validates
#       them all, with the hand-written good/ documents;
#   run.sh refused  checks that every bad/ document is refused for the
#       reason its '# expect:' lines give, so the validator cannot pass by
#       accepting everything.
# Without node or the validator's npm packages (scripts/install-deps.sh runs
# `npm ci` here) it skips with exit 77, unless NFSRDMA_REQUIRE_REAL=1.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

unavailable() {
  echo "kube-validate: $1" >&2
  [[ ${NFSRDMA_REQUIRE_REAL:-0} == 1 ]] && exit 1
  exit 77
}
command -v node >/dev/null || unavailable "node not found (Debian: nodejs)"
[[ -d $here/node_modules/kubernetes-models ]] ||
  unavailable "the validator's packages are missing: run scripts/install-deps.sh (npm ci in $here)"

render_all() {
  local bench=$1 out=$2 image=reg.example/nfsrdma:1 n=0
  local -a storage=("--target t=nfs:nfs://srv/export" "--target t=libnfs:nfs://srv/export/{rank}"
    "--volume v=rwx:nfs-client" "--volume v=ephemeral:local-path")
  local -a rdma=("" "--rdma" "--rdma --host-network")
  for s in "${storage[@]}"; do
    for r in "${rdma[@]}"; do
      for mpi in "" "--mpi-operator"; do
        n=$((n + 1))
        # shellcheck disable=SC2086  # each option string is words on purpose
        "$bench" kube --clients 4 --image $image $s $r $mpi >"$out/combo-$n.yaml"
      done
    done
  done
  "$bench" kube --clients 4 --image $image --volume nfs=rwx:nfs-client \
    --volume local=ephemeral:local-path --profiles 4k-randread,128k-read,4m-write \
    >"$out/seed.yaml"
  "$bench" kube --clients 8 --image $image --name r22 --namespace bench --rdma rdma/hca_shared_devices_a \
    --target rdma=nfs:nfs://srv:20049/export?proto=rdma --volume nfs=rwx:nfs-client:500Gi --verify \
    --out "$out/dir" >/dev/null
  echo "kube-validate: rendered $n combinations, the seed comparison and an --out directory"
}

case ${1:-} in
  rendered)
    [[ -x ${2:-} ]] || { echo "usage: run.sh rendered NFSRDMA_BENCH" >&2; exit 2; }
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
    render_all "$2" "$out"
    node "$here/validate.mjs" "$out"/*.yaml "$out/dir" "$here"/good/*.yaml
    ;;
  refused)
    node "$here/validate.mjs" --expect-invalid "$here"/bad/*.yaml
    ;;
  *)
    echo "usage: run.sh rendered NFSRDMA_BENCH | run.sh refused" >&2
    exit 2
    ;;
esac
