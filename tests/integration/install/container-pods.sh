#!/usr/bin/env bash
# Why: the pods of `nfsrdma-bench kube` run the image of
# configs/kube/Containerfile, and neither had ever run. This builds the image
# for real with podman and runs a rendered run's pods in it, failing with the
# step that broke:
#  1. the Debian base image, made here (no registry is reachable):
#     mmdebstrap from this machine's own Debian mirror, podman import; kept
#     as localhost/nfsrdma-base:bookworm for the next run;
#  2. podman build of the Containerfile, its first stage taking the packages
#     cpack makes from BUILD_DIR (the binaries the other tests tested);
#  3. nfs-ganesha on 127.0.0.1 (nfsrdma-server serve of BUILD_DIR);
#     `nfsrdma-bench kube --clients 3 --host-network` renders the run; each
#     completion of its Indexed Job becomes a Pod (job-pods.mjs: podman's
#     kube play takes Pods, not Jobs); podman kube play runs the three;
#  4. each pod exits 0, and `nfsrdma-bench aggregate` of their logs adds up
#     3 clients whose windows overlap.
# Podman runs with runc and capped ulimits from a config of its own
# (CONTAINERS_CONF; the system's files are not changed). It removes the
# pods (nfsrdma-pods-0..2, an interrupted run's too), the image it built
# and the untagged images of its build's first stage on exit.
# Usage: container-pods.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=${1:?usage: container-pods.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: container-pods.sh BUILD_DIR SOURCE_DIR}
work=$(mktemp -d /tmp/nfsrdma-pods.XXXXXX)
image=localhost/nfsrdma:pods-test
base=localhost/nfsrdma-base:bookworm
# shellcheck source=tests/integration/install/lib.sh
. "$src/tests/integration/install/lib.sh"
pods=(nfsrdma-pods-0 nfsrdma-pods-1 nfsrdma-pods-2)
built=0
dangling_before=""
cleanup() {
  timeout 60 podman pod rm -f --ignore "${pods[@]}" >/dev/null 2>&1 || true
  ((built == 0)) || podman rmi -f "$image" >/dev/null 2>&1 || true
  # The build's first stage, left untagged: the untagged images that were not
  # there before this run's build (one running beside it could add its own).
  local id
  if ((built == 1)); then
    for id in $(podman images -q --filter dangling=true 2>/dev/null); do
      grep -qx "$id" <<<"$dangling_before" || podman rmi -f "$id" >/dev/null 2>&1 || true
    done
  fi
  stop_serving
  rm -rf "$work"
}
trap cleanup EXIT
for tool in podman runc mmdebstrap node; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (scripts/install-deps.sh)"
done
# runc, not crun (which cannot set its rlimits in this kind of sandbox), and
# ulimits within the hard limits this shell has; processes also within the
# kernel's pid_max (runc was refused an nproc above it here).
nofile=$(ulimit -Hn)
nproc=$(ulimit -Hu)
pid_max=$(cat /proc/sys/kernel/pid_max)
[ "$nofile" = unlimited ] && nofile=1048576
if [ "$nproc" = unlimited ] || [ "$nproc" -gt "$pid_max" ]; then nproc=$pid_max; fi
cat >"$work/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
export CONTAINERS_CONF=$work/containers.conf

step "the base image $base"
if podman image exists "$base"; then
  echo "kept from an earlier run"
else
  mirror=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
  [ -n "$mirror" ] || mirror=$(sed -n 's/^deb \(http[^ ]*\) bookworm .*/\1/p' /etc/apt/sources.list 2>/dev/null | head -n1)
  [ -n "$mirror" ] || fail "no Debian mirror in this machine's apt sources"
  logged "$work/mmdebstrap.log" mmdebstrap --variant=minbase bookworm "$work/rootfs.tar" "$mirror"
  logged "$work/import.log" podman import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    "$work/rootfs.tar" "$base"
  rm -f "$work/rootfs.tar"
fi

step "podman build of configs/kube/Containerfile, with the packages of $build"
! podman image exists "$image" || fail "$image exists already; this test builds and removes its own"
dangling_before=$(podman images -q --filter dangling=true)
built=1
logged "$work/cpack.log" cpack --config "$build/CPackConfig.cmake" -B "$work/context/packages"
rm -rf "$work/context/packages/_CPack_Packages"
logged "$work/build.log" podman build -f "$src/configs/kube/Containerfile" \
  --ignorefile "$src/configs/kube/Containerfile.dockerignore" --build-arg "BASE=$base" \
  -t "$image" "$work/context"
out=$(podman run --rm "$image" nfsrdma-bench --version 2>&1) || fail "nfsrdma-bench in the image: $out"
echo "in the image: $out"

step "three rendered pods against nfs-ganesha on 127.0.0.1"
# shellcheck source=scripts/lib/serve-loopback.sh
. "$src/scripts/lib/serve-loopback.sh"
mkdir -p "$work/export"
serve_loopback "$build/bin/nfsrdma-server" "$work/export" "$work/serving" || fail "nfsrdma-server serve"
# The cells start 30 s after rendering, on the clock: time for kube play.
"$build/bin/nfsrdma-bench" kube --clients 3 --image "$image" --name nfsrdma-pods \
  --target "ours=nfs:nfs://127.0.0.1:$SERVE_PORT/export" --profiles 4k-randread,128k-write \
  --runtime 2 --ramp 0.5 --size 8m --cell-slot 8 --start-in 30 --host-network \
  >"$work/rendered.yaml" 2>"$work/render.log" || fail "nfsrdma-bench kube: $(cat "$work/render.log")"
node "$src/tests/integration/install/job-pods.mjs" "$work/rendered.yaml" 127.0.0.1 \
  >"$work/pods.yaml" 2>"$work/job-pods.log" || fail "job-pods.mjs: $(cat "$work/job-pods.log")"
timeout 60 podman pod rm -f --ignore "${pods[@]}" >/dev/null 2>&1 || true # an interrupted run's
logged "$work/play.log" podman kube play "$work/pods.yaml"
logs=()
for i in 0 1 2; do
  c=nfsrdma-pods-$i-client
  status=$(timeout 180 podman wait "$c") || fail "pod $i did not end within 180 s"
  podman logs "$c" >"$work/pod$i.log" 2>&1
  [ "$status" = 0 ] || fail "pod $i exited $status: $(tail -20 "$work/pod$i.log")"
  logs+=("$work/pod$i.log")
done

step "nfsrdma-bench aggregate of the pods' logs"
agg=$("$build/bin/nfsrdma-bench" aggregate --clients 3 "${logs[@]}" 2>&1) || fail "aggregate: $agg"
echo "$agg"
for want in "4k-randread ours:" "128k-write ours:" " clients     3" " overlap   "; do
  grep -qF -- "$want" <<<"$agg" || fail "the aggregate lacks '$want'"
done
! grep -q "no overlap" <<<"$agg" || fail "the pods' windows did not overlap"
echo "PASS container_pods"
