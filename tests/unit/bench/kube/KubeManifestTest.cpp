// The rendered manifests, read back with yaml-cpp: the exact structure of a
// small run (names, completions, parallelism, the pod's command, volumes,
// RDMA, placement), the MPIJob's replicas and launcher command, the pod argv
// a test can run, and every combination of engine, volume kind, RDMA and
// controller rendering into documents whose strings read back as strings.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "bench/kube/KubeCommandLine.h"
#include "bench/kube/KubeManifest.h"

namespace nfsrdma::bench::kube {
namespace {

using Strings = std::vector<std::string>;

constexpr std::int64_t kNow = 1'800'000'000;

// Two clients, a shared volume, an NFS target over RDMA, on the host's network.
KubeArgs smallArgs() {
  KubeArgs a;
  a.clients = 2;
  a.image = "reg.example/nfsrdma:1";
  a.name = "r22";
  a.volumes = {"shared=rwx:nfs-client"};
  a.targets = {"rdma=nfs:nfs://srv:20049/export?proto=rdma"};
  a.profiles = "4k-randread,4m-write";
  a.runtime = 10;
  a.ramp = 2;
  a.size = "256m";
  a.rdmaResource = std::string(kDefaultRdmaResource);
  a.hostNetwork = true;
  return a;
}

std::vector<YAML::Node> documents(const KubeRun& run) {
  std::vector<YAML::Node> out;
  for (const auto& d : renderKubeDocuments(run)) out.push_back(YAML::Load(d.yaml));
  return out;
}

Strings strings(const YAML::Node& seq) {
  Strings out;
  for (const auto& n : seq) out.push_back(n.as<std::string>());
  return out;
}

Strings envNames(const YAML::Node& container) {
  Strings out;
  for (const auto& e : container["env"]) out.push_back(e["name"].as<std::string>());
  return out;
}

TEST(KubeManifest, SmallRunHasSettingsClaimAndIndexedJob) {
  const KubeRun run = planKubeRun(smallArgs(), kNow);
  const auto files = renderKubeDocuments(run);
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].file, "00-settings.yaml");
  EXPECT_EQ(files[1].file, "10-volume-shared.yaml");
  EXPECT_EQ(files[2].file, "20-job.yaml");
  const auto docs = documents(run);
  const YAML::Node& cm = docs[0];
  EXPECT_EQ(cm["kind"].as<std::string>(), "ConfigMap");
  EXPECT_EQ(cm["metadata"]["name"].as<std::string>(), "r22-settings");
  const YAML::Node data = cm["data"];
  EXPECT_EQ(data.size(), 11u);
  EXPECT_EQ(data["NFSRDMA_TARGET_0"].as<std::string>(),
            "rdma=nfs:nfs://srv:20049/export?proto=rdma&bind={pod-ip}");
  EXPECT_EQ(data["NFSRDMA_TARGET_1"].as<std::string>(), "shared=path:/mnt/shared");
  EXPECT_EQ(data["NFSRDMA_PROFILES"].as<std::string>(), "4k-randread,4m-write");
  EXPECT_EQ(data["NFSRDMA_START_AT"].as<std::string>(), std::to_string(kNow + 120));
  EXPECT_EQ(data["NFSRDMA_CELL_SLOT"].as<std::string>(), "72");
  const YAML::Node& pvc = docs[1];
  EXPECT_EQ(pvc["kind"].as<std::string>(), "PersistentVolumeClaim");
  EXPECT_EQ(pvc["metadata"]["name"].as<std::string>(), "r22-shared");
  EXPECT_EQ(strings(pvc["spec"]["accessModes"]), Strings{"ReadWriteMany"});
  EXPECT_EQ(pvc["spec"]["storageClassName"].as<std::string>(), "nfs-client");
  EXPECT_EQ(pvc["spec"]["resources"]["requests"]["storage"].as<std::string>(), "2Gi");
}

TEST(KubeManifest, JobRunsOneClientPerIndexAndNode) {
  const KubeRun run = planKubeRun(smallArgs(), kNow);
  const YAML::Node job = documents(run)[2];
  EXPECT_EQ(job["apiVersion"].as<std::string>(), "batch/v1");
  EXPECT_EQ(job["metadata"]["name"].as<std::string>(), "r22");
  const YAML::Node spec = job["spec"];
  EXPECT_EQ(spec["completionMode"].as<std::string>(), "Indexed");
  EXPECT_EQ(spec["completions"].as<int>(), 2);
  EXPECT_EQ(spec["parallelism"].as<int>(), 2);
  EXPECT_EQ(spec["backoffLimit"].as<int>(), 0);
  const YAML::Node pod = spec["template"]["spec"];
  EXPECT_EQ(pod["restartPolicy"].as<std::string>(), "Never");
  EXPECT_TRUE(pod["hostNetwork"].as<bool>());
  EXPECT_EQ(pod["dnsPolicy"].as<std::string>(), "ClusterFirstWithHostNet");
  const YAML::Node term =
      pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0];
  EXPECT_EQ(term["topologyKey"].as<std::string>(), "kubernetes.io/hostname");
  const YAML::Node labels = spec["template"]["metadata"]["labels"];
  for (const auto& kv : term["labelSelector"]["matchLabels"]) {
    EXPECT_EQ(labels[kv.first.as<std::string>()].as<std::string>(), kv.second.as<std::string>());
  }
  ASSERT_EQ(pod["volumes"].size(), 1u);
  EXPECT_EQ(pod["volumes"][0]["persistentVolumeClaim"]["claimName"].as<std::string>(),
            "r22-shared");
}

TEST(KubeManifest, ClientContainerIsTheCompareCommandLine) {
  const KubeRun run = planKubeRun(smallArgs(), kNow);
  const YAML::Node c = documents(run)[2]["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(c["image"].as<std::string>(), "reg.example/nfsrdma:1");
  EXPECT_EQ(strings(c["command"]), Strings{"nfsrdma-bench"});
  const Strings args{"compare",
                     "--target",
                     "$(NFSRDMA_TARGET_0)",
                     "--target",
                     "$(NFSRDMA_TARGET_1)",
                     "--profiles",
                     "$(NFSRDMA_PROFILES)",
                     "--runtime",
                     "$(NFSRDMA_RUNTIME)",
                     "--ramp",
                     "$(NFSRDMA_RAMP)",
                     "--size",
                     "$(NFSRDMA_SIZE)",
                     "--iodepth",
                     "$(NFSRDMA_IODEPTH)",
                     "--numjobs",
                     "$(NFSRDMA_NUMJOBS)",
                     "--clients",
                     "$(NFSRDMA_CLIENTS)",
                     "--client-index",
                     "$(JOB_COMPLETION_INDEX)",
                     "--start-at",
                     "$(NFSRDMA_START_AT)",
                     "--cell-slot",
                     "$(NFSRDMA_CELL_SLOT)",
                     "--json",
                     "",
                     "--html",
                     ""};
  EXPECT_EQ(strings(c["args"]), args);
  const Strings env{"NFSRDMA_TARGET_0", "NFSRDMA_TARGET_1",  "NFSRDMA_PROFILES",
                    "NFSRDMA_RUNTIME",  "NFSRDMA_RAMP",      "NFSRDMA_SIZE",
                    "NFSRDMA_IODEPTH",  "NFSRDMA_NUMJOBS",   "NFSRDMA_CLIENTS",
                    "NFSRDMA_START_AT", "NFSRDMA_CELL_SLOT", "JOB_COMPLETION_INDEX",
                    "NFSRDMA_POD_IP",   "NFSRDMA_NODE_NAME"};
  EXPECT_EQ(envNames(c), env);
  EXPECT_EQ(c["env"][0]["valueFrom"]["configMapKeyRef"]["name"].as<std::string>(), "r22-settings");
  EXPECT_EQ(c["env"][11]["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>(),
            "metadata.annotations['batch.kubernetes.io/job-completion-index']");
  EXPECT_EQ(c["env"][12]["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>(), "status.podIP");
  EXPECT_EQ(c["resources"]["limits"]["rdma/rdma_shared_device_a"].as<int>(), 1);
  EXPECT_EQ(strings(c["securityContext"]["capabilities"]["add"]), Strings{"IPC_LOCK"});
  EXPECT_EQ(c["volumeMounts"][0]["name"].as<std::string>(), "shared");
  EXPECT_EQ(c["volumeMounts"][0]["mountPath"].as<std::string>(), "/mnt/shared");
}

TEST(KubeManifest, PodArgvIsWhatTheKubeletRuns) {
  const KubeRun run = planKubeRun(smallArgs(), kNow);
  const Strings argv{"nfsrdma-bench",  "compare",
                     "--target",       "rdma=nfs:nfs://srv:20049/export?proto=rdma&bind={pod-ip}",
                     "--target",       "shared=path:/mnt/shared",
                     "--profiles",     "4k-randread,4m-write",
                     "--runtime",      "10",
                     "--ramp",         "2",
                     "--size",         "256m",
                     "--iodepth",      "0",
                     "--numjobs",      "1",
                     "--clients",      "2",
                     "--client-index", "1",
                     "--start-at",     std::to_string(kNow + 120),
                     "--cell-slot",    "72",
                     "--json",         "",
                     "--html",         ""};
  EXPECT_EQ(podArgv(run, 1), argv);
}

TEST(KubeManifest, EphemeralVolumeIsAClaimTemplatePerPod) {
  KubeArgs a = smallArgs();
  a.volumes = {"local=ephemeral:local-path:50Gi"};
  const auto docs = documents(planKubeRun(a, kNow));
  ASSERT_EQ(docs.size(), 2u);  // no PVC document: the pod's template makes each claim
  const YAML::Node vol = docs[1]["spec"]["template"]["spec"]["volumes"][0];
  EXPECT_EQ(vol["name"].as<std::string>(), "local");
  const YAML::Node claim = vol["ephemeral"]["volumeClaimTemplate"]["spec"];
  EXPECT_EQ(strings(claim["accessModes"]), Strings{"ReadWriteOnce"});
  EXPECT_EQ(claim["storageClassName"].as<std::string>(), "local-path");
  EXPECT_EQ(claim["resources"]["requests"]["storage"].as<std::string>(), "50Gi");
}

TEST(KubeManifest, MpiJobHasOneLauncherAndAWorkerPerClient) {
  KubeArgs a = smallArgs();
  a.mpiOperator = true;
  const KubeRun run = planKubeRun(a, kNow);
  const auto docs = documents(run);
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[0]["data"].size(), 8u);  // no clients, start time or slot under MPI
  const YAML::Node mpi = docs[2];
  EXPECT_EQ(mpi["apiVersion"].as<std::string>(), "kubeflow.org/v2beta1");
  EXPECT_EQ(mpi["kind"].as<std::string>(), "MPIJob");
  const YAML::Node spec = mpi["spec"];
  EXPECT_EQ(spec["slotsPerWorker"].as<int>(), 1);
  EXPECT_EQ(spec["mpiImplementation"].as<std::string>(), "OpenMPI");
  EXPECT_EQ(spec["runPolicy"]["cleanPodPolicy"].as<std::string>(), "Running");
  const YAML::Node launcher = spec["mpiReplicaSpecs"]["Launcher"];
  const YAML::Node worker = spec["mpiReplicaSpecs"]["Worker"];
  EXPECT_EQ(launcher["replicas"].as<int>(), 1);
  EXPECT_EQ(worker["replicas"].as<int>(), 2);
  const YAML::Node lc = launcher["template"]["spec"]["containers"][0];
  EXPECT_EQ(strings(lc["command"]), Strings{"mpirun"});
  EXPECT_FALSE(lc["volumeMounts"]);
  EXPECT_FALSE(lc["resources"]);
  const YAML::Node wc = worker["template"]["spec"]["containers"][0];
  EXPECT_EQ(strings(wc["command"]), (Strings{"/usr/sbin/sshd", "-De"}));
  EXPECT_FALSE(wc["env"]);
  EXPECT_EQ(wc["resources"]["limits"]["rdma/rdma_shared_device_a"].as<int>(), 1);
  EXPECT_EQ(worker["template"]["spec"]["volumes"].size(), 1u);
}

TEST(KubeManifest, LauncherArgvIsMpirunOverCompareWithoutTheClock) {
  KubeArgs a = smallArgs();
  a.mpiOperator = true;
  a.verify = true;
  const Strings argv{"mpirun",
                     "--allow-run-as-root",
                     "-np",
                     "2",
                     "--bind-to",
                     "none",
                     "--mca",
                     "pml",
                     "ob1",
                     "--mca",
                     "btl",
                     "self,tcp",
                     "nfsrdma-bench",
                     "compare",
                     "--target",
                     "rdma=nfs:nfs://srv:20049/export?proto=rdma",
                     "--target",
                     "shared=path:/mnt/shared",
                     "--profiles",
                     "4k-randread,4m-write",
                     "--runtime",
                     "10",
                     "--ramp",
                     "2",
                     "--size",
                     "256m",
                     "--iodepth",
                     "0",
                     "--numjobs",
                     "1",
                     "--verify",
                     "--json",
                     "",
                     "--html",
                     ""};
  EXPECT_EQ(launcherArgv(planKubeRun(a, kNow)), argv);
}

TEST(KubeManifest, StreamSaysWhenToApplyAndSeparatesDocuments) {
  const std::string s = renderKubeStream(planKubeRun(smallArgs(), kNow));
  EXPECT_EQ(s.rfind("# nfsrdma-bench kube: 2 clients, rendered 2027-01-15T08:00:00Z\n", 0), 0u)
      << s;
  EXPECT_NE(s.find("# Apply before 2027-01-15T08:02:00Z (1800000120)"), std::string::npos);
  EXPECT_EQ(YAML::LoadAll(s).size(), 3u);
}

// Every engine, volume kind, RDMA option and controller.
TEST(KubeManifest, EveryCombinationRendersStringsAsStrings) {
  const std::vector<std::pair<Strings, Strings>> storage = {
      {{"t=nfs:nfs://srv/export"}, {}},
      {{"t=libnfs:nfs://srv/export/{rank}"}, {}},
      {{}, {"v=rwx:nfs-client"}},
      {{}, {"v=ephemeral:local-path"}},
  };
  int rendered = 0;
  for (const auto& [targets, volumes] : storage) {
    for (int rdma = 0; rdma < 3; ++rdma) {
      for (bool mpi : {false, true}) {
        KubeArgs a = smallArgs();
        a.targets = targets;
        a.volumes = volumes;
        a.rdmaResource = rdma == 0 ? "" : std::string(kDefaultRdmaResource);
        a.hostNetwork = rdma == 2;
        a.mpiOperator = mpi;
        const KubeRun run = planKubeRun(a, kNow);
        const auto docs = YAML::LoadAll(renderKubeStream(run));
        ASSERT_GE(docs.size(), 2u);
        for (const auto& [k, v] : runSettings(run)) {
          EXPECT_EQ(docs[0]["data"][k].as<std::string>(), v) << k;
        }
        ++rendered;
      }
    }
  }
  EXPECT_EQ(rendered, 24);
}

TEST(KubeCommandLine, ExpandsAsKubernetesDoes) {
  const Settings env{{"A", "x y"}, {"B", ""}};
  EXPECT_EQ(expandEnvRefs("$(A)", env), "x y");
  EXPECT_EQ(expandEnvRefs("-$(B)-", env), "--");
  EXPECT_EQ(expandEnvRefs("$(C)", env), "$(C)");
  EXPECT_EQ(expandEnvRefs("$$(A)", env), "$(A)");
  EXPECT_EQ(expandEnvRefs("$(A", env), "$(A");
  EXPECT_EQ(expandEnvRefs("5$", env), "5$");
}

}  // namespace
}  // namespace nfsrdma::bench::kube
