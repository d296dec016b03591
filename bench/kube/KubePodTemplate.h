// The pod templates of a kube run: the Indexed Job's rank, and the
// MPIJob's launcher and workers. Ranks and workers are where the
// benchmark's I/O happens, so they carry the volumes, RDMA and placement;
// the launcher only runs mpirun.
#pragma once

#include <yaml-cpp/yaml.h>

#include "bench/kube/KubeRun.h"

namespace nfsrdma::bench::kube {

enum class PodRole {
  Client,    // the Indexed Job's pod: runs compare for its index
  Launcher,  // the MPIJob's mpirun
  Worker,    // an MPIJob rank's host: sshd, which mpirun starts the rank through
};
const char* podRoleName(PodRole r);  // "client", "launcher", "worker"

// Emits `template:` and its map (metadata and spec) into the current map.
void emitPodTemplate(YAML::Emitter& e, const KubeRun& run, PodRole role);
// Emits `metadata:` of an object of the run: its name, the run's
// namespace and the run's labels.
void emitMetadata(YAML::Emitter& e, const KubeRun& run, const std::string& name);
// Emits `spec:` of a volume's claim (a PVC's, or an ephemeral volume's
// template): access mode by kind, class, the planned capacity.
void emitClaimSpec(YAML::Emitter& e, const KubeVolume& v);

}  // namespace nfsrdma::bench::kube
