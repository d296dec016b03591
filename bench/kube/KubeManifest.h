// The Kubernetes objects of a kube run, as YAML documents:
//   00-settings.yaml      ConfigMap NAME-settings: the run's settings (KubeCommandLine.h)
//   10-volume-VOL.yaml    PersistentVolumeClaim NAME-VOL per --volume VOL=rwx:CLASS
//   20-job.yaml           the Indexed Job NAME, one rank per pod and node, or
//   20-mpijob.yaml        with --mpi-operator, the MPIJob NAME (kubeflow.org/v2beta1)
// The prefixes order `kubectl apply -f DIR`, which applies a directory's
// files by name: the ConfigMap and the claims exist before the pods that use
// them. Per-pod (ephemeral) volumes live inside the pod template.
#pragma once

#include <string>
#include <vector>

#include "bench/kube/KubeRun.h"

namespace nfsrdma::bench::kube {

// Pods' labels: the run's instance and each pod's role (the label values client,
// launcher, worker: a client pod runs one rank); the one-per-node anti-affinity selects on both.
inline constexpr const char* kNameLabel = "app.kubernetes.io/name";
inline constexpr const char* kInstanceLabel = "app.kubernetes.io/instance";
inline constexpr const char* kRoleLabel = "nfsrdma.io/role";
// The port the image's sshd listens on for the MPI launcher (Containerfile):
// not 22, which a node's own sshd holds under --host-network.
inline constexpr int kWorkerSshPort = 2222;

struct KubeDocument {
  std::string file;  // "20-job.yaml"
  std::string yaml;  // one document, no "---"
};

// The documents in apply order.
std::vector<KubeDocument> renderKubeDocuments(const KubeRun& run);
// All of them as one stream for `kubectl apply -f -`: a comment saying
// when the first cell starts, then the documents between "---" lines.
std::string renderKubeStream(const KubeRun& run);
// "2026-11-01T12:00:00Z", for the comment and the command's note.
std::string utcTime(std::int64_t unixSeconds);
// A storage request in Kubernetes' binary units: "3Gi", or "1536Mi" when not
// whole GiB (rounded up to whole MiB).
std::string quantity(std::uint64_t bytes);

}  // namespace nfsrdma::bench::kube
