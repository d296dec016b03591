// What each pod of a kube run executes, and where its settings live.
//
// The settings (targets, profiles, workload, ranks, start time) are the
// data of one ConfigMap; the container's env takes each key by
// configMapKeyRef, and its args name them as $(KEY), which Kubernetes
// expands before the process starts. So the image needs no shell and
// `nfsrdma-bench compare` no config file format of its own: the pod's argv
// is exactly a compare command line, and `kubectl get configmap NAME-settings
// -o yaml` shows the whole run in one place. A repeatable option is one key
// per value (NFSRDMA_TARGET_0, _1, ...) because one $(KEY) expands to one
// argument. --verify, a flag without a value, is written into the args
// themselves.
//
// podArgv and launcherArgv do that expansion here, as Kubernetes does, so a
// test can run the rendered command on this host.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bench/kube/KubeRun.h"

namespace nfsrdma::bench::kube {

// The Indexed Job's per-pod index, which Kubernetes also sets itself; the
// manifest declares it from the pod's annotation so that $(...) in the args
// refers to a variable the manifest shows.
inline constexpr const char* kIndexEnv = "JOB_COMPLETION_INDEX";
inline constexpr const char* kIndexAnnotation = "batch.kubernetes.io/job-completion-index";
inline constexpr const char* kPodIpEnv = "NFSRDMA_POD_IP";
inline constexpr const char* kNodeNameEnv = "NFSRDMA_NODE_NAME";

using Settings = std::vector<std::pair<std::string, std::string>>;  // key, value, in order

// The ConfigMap's data: NFSRDMA_TARGET_i, NFSRDMA_PROFILES (when given),
// NFSRDMA_RUNTIME, _RAMP, _SIZE, _IODEPTH, _NUMJOBS and, for the Indexed
// Job, NFSRDMA_CLIENTS, _START_AT, _CELL_SLOT.
Settings runSettings(const KubeRun& run);

// `compare` and its options with $(KEY) for every setting: the Indexed
// Job's container args (after the command "nfsrdma-bench"), or what
// mpirun starts on each worker.
std::vector<std::string> compareArgs(const KubeRun& run);
// mpirun and its options, then "nfsrdma-bench" and compareArgs: the
// MPIJob launcher's command and args.
std::vector<std::string> launcherCommand(const KubeRun& run);

// Kubernetes' expansion of a container's command and args: $(NAME) becomes
// the variable's value when it is defined, and stays as written when not;
// $$ is one '$'.
std::string expandEnvRefs(const std::string& text, const Settings& env);

// Pod `index`'s argv of the Indexed Job ("nfsrdma-bench", "compare", ...),
// expanded as the kubelet expands it.
std::vector<std::string> podArgv(const KubeRun& run, std::uint32_t index);
// The MPIJob launcher's argv ("mpirun", ..., "nfsrdma-bench", "compare", ...).
std::vector<std::string> launcherArgv(const KubeRun& run);

}  // namespace nfsrdma::bench::kube
