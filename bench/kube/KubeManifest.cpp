#include "bench/kube/KubeManifest.h"

#include <ctime>

#include "bench/kube/KubeCommandLine.h"
#include "bench/kube/KubePodTemplate.h"
#include "bench/kube/KubeYaml.h"

namespace nfsrdma::bench::kube {
namespace {

using yaml::beginMap;
using yaml::field;
using yaml::key;
using yaml::number;

constexpr std::uint64_t kMiB = 1ULL << 20;
constexpr std::uint64_t kGiB = 1ULL << 30;

void begin(YAML::Emitter& e, const char* apiVersion, const char* kind) {
  e << YAML::BeginMap;
  field(e, "apiVersion", apiVersion);
  field(e, "kind", kind);
}

std::string settingsDocument(const KubeRun& run) {
  YAML::Emitter e;
  begin(e, "v1", "ConfigMap");
  emitMetadata(e, run, run.settingsName());
  beginMap(e, "data", "what each pod's compare command line reads as $(KEY)");
  for (const auto& [k, v] : runSettings(run)) {
    field(e, k, v);
    if (k == "NFSRDMA_START_AT")
      e << YAML::Comment(utcTime(run.startAt) + ", on the nodes' clocks");
  }
  e << YAML::EndMap << YAML::EndMap;
  return e.c_str();
}

std::string claimDocument(const KubeRun& run, const KubeVolume& v) {
  YAML::Emitter e;
  begin(e, "v1", "PersistentVolumeClaim");
  emitMetadata(e, run, run.claimName(v));
  emitClaimSpec(e, v);
  e << YAML::EndMap;
  return e.c_str();
}

std::string jobDocument(const KubeRun& run) {
  YAML::Emitter e;
  begin(e, "batch/v1", "Job");
  emitMetadata(e, run, run.name);
  beginMap(e, "spec");
  field(e, "completionMode", "Indexed");
  e << YAML::Comment("JOB_COMPLETION_INDEX is the client's index");
  number(e, "completions", run.clients);
  number(e, "parallelism", run.clients);
  e << YAML::Comment("all clients at once: each cell starts at one clock time");
  number(e, "backoffLimit", 0);
  e << YAML::Comment("a lost client loses the run's totals; no retry of a late one");
  emitPodTemplate(e, run, PodRole::Client);
  e << YAML::EndMap << YAML::EndMap;
  return e.c_str();
}

void emitReplica(YAML::Emitter& e, const KubeRun& run, PodRole role, std::int64_t replicas) {
  beginMap(e, role == PodRole::Launcher ? "Launcher" : "Worker");
  number(e, "replicas", replicas);
  field(e, "restartPolicy", "Never");
  emitPodTemplate(e, run, role);
  e << YAML::EndMap;
}

std::string mpiJobDocument(const KubeRun& run) {
  YAML::Emitter e;
  begin(e, "kubeflow.org/v2beta1", "MPIJob");
  emitMetadata(e, run, run.name);
  beginMap(e, "spec");
  number(e, "slotsPerWorker", 1);
  e << YAML::Comment("one rank per worker, one worker per node");
  field(e, "mpiImplementation", "OpenMPI");
  field(e, "sshAuthMountPath", "/root/.ssh");
  field(e, "launcherCreationPolicy", "WaitForWorkersReady");
  e << YAML::Comment("mpirun starts once every worker's sshd answers");
  beginMap(e, "runPolicy");
  field(e, "cleanPodPolicy", "Running");
  e << YAML::Comment("workers go when the launcher ends; its log (the results) stays");
  number(e, "backoffLimit", 0);
  e << YAML::EndMap;
  beginMap(e, "mpiReplicaSpecs");
  emitReplica(e, run, PodRole::Launcher, 1);
  emitReplica(e, run, PodRole::Worker, run.clients);
  e << YAML::EndMap << YAML::EndMap << YAML::EndMap;
  return e.c_str();
}

}  // namespace

std::string utcTime(std::int64_t unixSeconds) {
  const auto t = static_cast<std::time_t>(unixSeconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string quantity(std::uint64_t bytes) {
  if (bytes % kGiB == 0) return std::to_string(bytes / kGiB) + "Gi";
  return std::to_string((bytes + kMiB - 1) / kMiB) + "Mi";
}

std::vector<KubeDocument> renderKubeDocuments(const KubeRun& run) {
  std::vector<KubeDocument> docs{{"00-settings.yaml", settingsDocument(run)}};
  for (const auto& v : run.volumes) {
    if (v.kind == VolumeKind::SharedRwx)
      docs.push_back({"10-volume-" + v.name + ".yaml", claimDocument(run, v)});
  }
  if (run.mpiOperator) {
    docs.push_back({"20-mpijob.yaml", mpiJobDocument(run)});
  } else {
    docs.push_back({"20-job.yaml", jobDocument(run)});
  }
  for (auto& d : docs) d.yaml += "\n";
  return docs;
}

std::string renderKubeStream(const KubeRun& run) {
  std::string out = "# nfsrdma-bench kube: " + std::to_string(run.clients) + " clients, rendered " +
                    utcTime(run.renderedAt) + "\n";
  if (!run.mpiOperator) {
    out += "# Apply before " + utcTime(run.startAt) + " (" + std::to_string(run.startAt) +
           "): the first cell starts then, on the nodes' clocks; a cell every " +
           std::to_string(run.cellSlot) + " s.\n";
  }
  for (const auto& d : renderKubeDocuments(run)) out += "---\n" + d.yaml;
  return out;
}

}  // namespace nfsrdma::bench::kube
