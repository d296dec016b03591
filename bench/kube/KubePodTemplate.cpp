#include "bench/kube/KubePodTemplate.h"

#include <string>
#include <vector>

#include "bench/kube/KubeCommandLine.h"
#include "bench/kube/KubeManifest.h"
#include "bench/kube/KubeYaml.h"

namespace nfsrdma::bench::kube {
namespace {

using yaml::beginMap;
using yaml::field;
using yaml::key;
using yaml::number;

void emitLabels(YAML::Emitter& e, const KubeRun& run, const PodRole* role) {
  beginMap(e, "labels");
  field(e, kNameLabel, "nfsrdma-bench");
  field(e, kInstanceLabel, run.name);
  if (role != nullptr) field(e, kRoleLabel, podRoleName(*role));
  e << YAML::EndMap;
}

void emitStrings(YAML::Emitter& e, std::string_view k, const std::vector<std::string>& words) {
  key(e, k);
  e << YAML::BeginSeq;
  for (const auto& w : words) yaml::str(e, w);
  e << YAML::EndSeq;
}

// One rank per node, as a hard rule: two ranks on one node would share
// its NIC and cores, and every per-rank figure would be off. A topology
// spread with maxSkew 1 only balances: once every node has a rank it puts
// a second one on some. The cost: with fewer schedulable nodes than
// ranks the surplus pods stay Pending (the scheduler's event says why).
void emitAntiAffinity(YAML::Emitter& e, const KubeRun& run, PodRole role) {
  beginMap(e, "affinity", "one client per node: they must not share a node's NIC and cores");
  beginMap(e, "podAntiAffinity");
  key(e, "requiredDuringSchedulingIgnoredDuringExecution");
  e << YAML::BeginSeq << YAML::BeginMap;
  beginMap(e, "labelSelector");
  beginMap(e, "matchLabels");
  field(e, kInstanceLabel, run.name);
  field(e, kRoleLabel, podRoleName(role));
  e << YAML::EndMap << YAML::EndMap;
  field(e, "topologyKey", "kubernetes.io/hostname");
  e << YAML::EndMap << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
}

void emitFieldRefEnv(YAML::Emitter& e, const std::string& name, const std::string& path) {
  e << YAML::BeginMap;
  field(e, "name", name);
  beginMap(e, "valueFrom");
  beginMap(e, "fieldRef");
  field(e, "fieldPath", path);
  e << YAML::EndMap << YAML::EndMap << YAML::EndMap;
}

void emitSettingsEnv(YAML::Emitter& e, const KubeRun& run) {
  for (const auto& [k, v] : runSettings(run)) {
    e << YAML::BeginMap;
    field(e, "name", k);
    beginMap(e, "valueFrom");
    beginMap(e, "configMapKeyRef");
    field(e, "name", run.settingsName());
    field(e, "key", k);
    e << YAML::EndMap << YAML::EndMap << YAML::EndMap;
  }
}

// The settings for the args' $(KEY)s; a rank also gets its index (which
// Kubernetes would add itself, declared here so that the args name a
// variable the manifest shows), its IP for choosing the RDMA GID or the
// interface, and its node for the per-rank rows.
void emitEnv(YAML::Emitter& e, const KubeRun& run, PodRole role) {
  key(e, "env");
  e << YAML::BeginSeq;
  emitSettingsEnv(e, run);
  if (role == PodRole::Client) {
    emitFieldRefEnv(e, kIndexEnv, std::string("metadata.annotations['") + kIndexAnnotation + "']");
    emitFieldRefEnv(e, kPodIpEnv, "status.podIP");
    emitFieldRefEnv(e, kNodeNameEnv, "spec.nodeName");
  }
  e << YAML::EndSeq;
}

void emitRdma(YAML::Emitter& e, const KubeRun& run) {
  beginMap(e, "resources");
  beginMap(e, "limits", "the device plugin's share of the node's RDMA device");
  number(e, run.rdmaResource, 1);
  e << YAML::EndMap << YAML::EndMap;
  beginMap(e, "securityContext");
  beginMap(e, "capabilities");
  key(e, "add");
  e << YAML::Comment(
      "CAP_IPC_LOCK lets verbs pin memory beyond RLIMIT_MEMLOCK; Kubernetes has no memlock field");
  e << YAML::BeginSeq << "IPC_LOCK" << YAML::EndSeq;
  e << YAML::EndMap << YAML::EndMap;
}

void emitVolumeMounts(YAML::Emitter& e, const KubeRun& run) {
  key(e, "volumeMounts");
  e << YAML::BeginSeq;
  for (const auto& v : run.volumes) {
    e << YAML::BeginMap;
    field(e, "name", v.name);
    field(e, "mountPath", v.mountPath());
    e << YAML::EndMap;
  }
  e << YAML::EndSeq;
}

// The launcher's mpirun reaches the workers through sshd, which the
// operator gives keys at /root/.ssh; the ranks it starts get the workers'
// limits and capabilities, not their env (sshd starts a clean one), so the
// settings travel in mpirun's argv.
void emitWorkerCommand(YAML::Emitter& e) {
  emitStrings(e, "command", {"/usr/sbin/sshd", "-De"});
  beginMap(e, "readinessProbe", "the launcher starts once sshd answers (launcherCreationPolicy)");
  beginMap(e, "tcpSocket");
  number(e, "port", kWorkerSshPort);
  e << YAML::EndMap;
  number(e, "periodSeconds", 2);
  e << YAML::EndMap;
}

void emitCommand(YAML::Emitter& e, const KubeRun& run, PodRole role) {
  if (role == PodRole::Worker) return emitWorkerCommand(e);
  if (role == PodRole::Launcher) {
    const auto cmd = launcherCommand(run);
    emitStrings(e, "command", {cmd.front()});
    emitStrings(e, "args", std::vector<std::string>(cmd.begin() + 1, cmd.end()));
  } else {
    emitStrings(e, "command", {"nfsrdma-bench"});
    emitStrings(e, "args", compareArgs(run));
  }
  emitEnv(e, run, role);
}

void emitContainer(YAML::Emitter& e, const KubeRun& run, PodRole role) {
  key(e, "containers");
  e << YAML::BeginSeq << YAML::BeginMap;
  field(e, "name", podRoleName(role));
  field(e, "image", run.image);
  emitCommand(e, run, role);
  if (role != PodRole::Launcher) {
    if (!run.rdmaResource.empty()) emitRdma(e, run);
    if (!run.volumes.empty()) emitVolumeMounts(e, run);
  }
  e << YAML::EndMap << YAML::EndSeq;
}

void emitVolume(YAML::Emitter& e, const KubeRun& run, const KubeVolume& v) {
  e << YAML::BeginMap;
  field(e, "name", v.name);
  if (v.kind == VolumeKind::SharedRwx) {
    beginMap(e, "persistentVolumeClaim");
    field(e, "claimName", run.claimName(v));
    e << YAML::EndMap;
  } else {
    beginMap(e, "ephemeral",
             "a claim per pod, deleted with it: node-local classes are ReadWriteOnce");
    beginMap(e, "volumeClaimTemplate");
    beginMap(e, "metadata");
    emitLabels(e, run, nullptr);
    e << YAML::EndMap;
    emitClaimSpec(e, v);
    e << YAML::EndMap << YAML::EndMap;
  }
  e << YAML::EndMap;
}

void emitPlacement(YAML::Emitter& e, const KubeRun& run, PodRole role) {
  if (role == PodRole::Launcher) return;
  if (run.hostNetwork) {
    yaml::flag(e, "hostNetwork", true);
    e << YAML::Comment("the node's netdevs and RDMA GIDs");
    field(e, "dnsPolicy", "ClusterFirstWithHostNet");
    e << YAML::Comment("cluster names still resolve with the host's network");
  }
  emitAntiAffinity(e, run, role);
}

void emitPodSpec(YAML::Emitter& e, const KubeRun& run, PodRole role) {
  beginMap(e, "spec");
  field(e, "restartPolicy", "Never");
  if (role == PodRole::Client) {
    e << YAML::Comment("a restarted client would run its cells late; the run is lost instead");
  }
  emitPlacement(e, run, role);
  emitContainer(e, run, role);
  if (role != PodRole::Launcher && !run.volumes.empty()) {
    key(e, "volumes");
    e << YAML::BeginSeq;
    for (const auto& v : run.volumes) emitVolume(e, run, v);
    e << YAML::EndSeq;
  }
  e << YAML::EndMap;
}

}  // namespace

void emitClaimSpec(YAML::Emitter& e, const KubeVolume& v) {
  const bool shared = v.kind == VolumeKind::SharedRwx;
  key(e, "spec");
  if (shared) e << YAML::Comment("one claim every pod mounts: their files share one file system");
  e << YAML::BeginMap;
  key(e, "accessModes");
  e << YAML::BeginSeq << (shared ? "ReadWriteMany" : "ReadWriteOnce") << YAML::EndSeq;
  field(e, "storageClassName", v.storageClass);
  beginMap(e, "resources");
  beginMap(e, "requests");
  field(e, "storage", quantity(v.capacityBytes));
  e << YAML::EndMap << YAML::EndMap << YAML::EndMap;
}

const char* podRoleName(PodRole r) {
  switch (r) {
    case PodRole::Client:
      return "client";
    case PodRole::Launcher:
      return "launcher";
    case PodRole::Worker:
      return "worker";
  }
  return "client";
}

void emitMetadata(YAML::Emitter& e, const KubeRun& run, const std::string& name) {
  beginMap(e, "metadata");
  field(e, "name", name);
  if (!run.ns.empty()) field(e, "namespace", run.ns);
  emitLabels(e, run, nullptr);
  e << YAML::EndMap;
}

void emitPodTemplate(YAML::Emitter& e, const KubeRun& run, PodRole role) {
  beginMap(e, "template");
  beginMap(e, "metadata");
  emitLabels(e, run, &role);
  e << YAML::EndMap;
  emitPodSpec(e, run, role);
  e << YAML::EndMap;
}

}  // namespace nfsrdma::bench::kube
