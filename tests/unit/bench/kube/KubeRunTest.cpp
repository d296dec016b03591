// The kube command's options: each refused form with its message, and what
// the planner decides when an option is left out (start time, cell slot,
// volume sizes, the targets' order).
#include <gtest/gtest.h>

#include "bench/kube/KubeRun.h"
#include "tests/unit/bench/ErrorOf.h"

namespace nfsrdma::bench::kube {
namespace {

using nfsrdma::bench::testing::errorOf;

constexpr std::int64_t kNow = 1'800'000'000;
constexpr std::uint64_t kGiB = 1ULL << 30;

KubeArgs seedArgs() {
  KubeArgs a;
  a.clients = 4;
  a.image = "registry.example/nfsrdma:1";
  a.volumes = {"nfs=rwx:nfs-client", "local=ephemeral:local-path"};
  a.profiles = "4k-randread,128k-read,4m-write";
  return a;
}

std::string planError(KubeArgs a) {
  return errorOf([&] { planKubeRun(a, kNow); });
}

TEST(KubeVolumeOption, ParsesBothKindsAndAnOptionalSize) {
  const KubeVolume rwx = parseVolume("nfs=rwx:nfs-client");
  EXPECT_EQ(rwx.name, "nfs");
  EXPECT_EQ(rwx.kind, VolumeKind::SharedRwx);
  EXPECT_EQ(rwx.storageClass, "nfs-client");
  EXPECT_EQ(rwx.capacityBytes, 0u);
  EXPECT_EQ(rwx.mountPath(), "/mnt/nfs");
  const KubeVolume local = parseVolume("local=ephemeral:local-path:200Gi");
  EXPECT_EQ(local.kind, VolumeKind::Ephemeral);
  EXPECT_EQ(local.storageClass, "local-path");
  EXPECT_EQ(local.capacityBytes, 200 * kGiB);
  EXPECT_EQ(parseVolume("x=rwx:c.example.com:512m").capacityBytes, 512ULL << 20);
}

TEST(KubeVolumeOption, RefusesEachMalformedPartByName) {
  const std::string form =
      "expected NAME=rwx:STORAGECLASS[:SIZE] or NAME=ephemeral:STORAGECLASS[:SIZE]";
  EXPECT_EQ(errorOf([] { parseVolume("nfs=rwx:"); }), "--volume nfs=rwx:: " + form);
  EXPECT_EQ(errorOf([] { parseVolume("nfs"); }), "--volume nfs: " + form);
  EXPECT_EQ(errorOf([] { parseVolume("nfs=rwx"); }), "--volume nfs=rwx: " + form);
  EXPECT_EQ(errorOf([] { parseVolume("nfs=rox:c"); }),
            "--volume nfs=rox:c: kind 'rox': expected rwx (one ReadWriteMany claim every pod "
            "mounts) or ephemeral (a volume of its own per pod, for node-local classes such as "
            "local-path)");
  EXPECT_EQ(errorOf([] { parseVolume("NFS=rwx:c"); }),
            "--volume NFS=rwx:c: name 'NFS': expected at most 20 lowercase letters, digits and "
            "'-', starting with a letter (it names the volume, its claim and its target)");
  EXPECT_EQ(errorOf([] { parseVolume("nfs=rwx:Fast_SSD"); }),
            "--volume nfs=rwx:Fast_SSD: storage class 'Fast_SSD': expected a StorageClass name "
            "(lowercase letters, digits, '-' and '.'); " +
                form);
  EXPECT_EQ(errorOf([] { parseVolume("nfs=rwx:c:lots"); }),
            "--volume nfs=rwx:c:lots: size 'lots': expected at least 1 MiB as a number with an "
            "optional binary unit (k, m, g, t or Ki, Mi, Gi, Ti), e.g. 200Gi");
}

TEST(KubeTargetOption, ParsesAndRefusesByName) {
  const KubeTarget t = parseTarget("nfs-rdma=nfs:nfs://srv:20049/export?proto=rdma");
  EXPECT_EQ(t.name, "nfs-rdma");
  EXPECT_EQ(t.engine, "nfs");
  EXPECT_EQ(t.location, "nfs://srv:20049/export?proto=rdma");
  EXPECT_EQ(parseTarget("l=libnfs:nfs://srv/e/{rank}").text(), "l=libnfs:nfs://srv/e/{rank}");
  EXPECT_EQ(errorOf([] { parseTarget("nfs://srv/export"); }),
            "--target nfs://srv/export: expected NAME=ENGINE:LOCATION (NAME=nfs:nfs://host/export, "
            "NAME=libnfs:nfs://host/export or NAME=path:DIR)");
  EXPECT_EQ(errorOf([] { parseTarget("x=fio:/dev/sda"); }),
            "--target x=fio:/dev/sda: engine 'fio': expected nfs, libnfs or path");
  EXPECT_EQ(errorOf([] { parseTarget("x=nfs:srv:/export"); }),
            "--target x=nfs:srv:/export: expected an nfs:// URL after nfs:");
  EXPECT_EQ(errorOf([] { parseTarget("x=path:data"); }),
            "--target x=path:data: expected an absolute directory after path:");
}

TEST(KubePlan, RefusesIdentityOptions) {
  KubeArgs a = seedArgs();
  a.image.clear();
  EXPECT_EQ(planError(a),
            "--image is required: the image built from configs/kube/Containerfile, pushed to a "
            "registry the cluster pulls from");
  a = seedArgs();
  a.clients = 0;
  EXPECT_EQ(planError(a),
            "--clients 0: expected 1..1000 (one pod per client, one client per node)");
  a.clients = -1;
  EXPECT_EQ(planError(a),
            "--clients -1: expected 1..1000 (one pod per client, one client per node)");
  a = seedArgs();
  a.name = "Run_1";
  EXPECT_EQ(
      planError(a),
      "--name 'Run_1': expected at most 40 lowercase letters, digits and '-', starting with a "
      "letter (Kubernetes derives the pods' names and host names from it)");
  a = seedArgs();
  a.ns = "-x";
  EXPECT_EQ(planError(a), "--namespace '-x': expected a namespace name (a DNS label)");
}

TEST(KubePlan, RefusesWorkloadOptionsAsCompareWould) {
  KubeArgs a = seedArgs();
  a.profiles = "4k-randread,8k-read";
  EXPECT_NE(planError(a).find("--profiles: "), std::string::npos) << planError(a);
  EXPECT_NE(planError(a).find("8k-read"), std::string::npos) << planError(a);
  a = seedArgs();
  a.size = "lots";
  EXPECT_NE(planError(a).find("--size 'lots'"), std::string::npos) << planError(a);
  a = seedArgs();
  a.runtime = 0;
  EXPECT_EQ(planError(a), "--runtime must be in (0, 86400] seconds");
  a = seedArgs();
  a.numjobs = 0;
  EXPECT_EQ(planError(a), "--numjobs must be 1..256");  // compare's bound (was kube's own 1..1024)
}

TEST(KubePlan, RefusesTargetsAPodCannotReach) {
  KubeArgs a = seedArgs();
  a.targets = {"scratch=path:/data"};
  EXPECT_EQ(planError(a),
            "--target scratch=path:/data: a path target in a pod must be on a volume: give "
            "--volume NAME=rwx:STORAGECLASS or NAME=ephemeral:STORAGECLASS, whose target is "
            "NAME=path:/mnt/NAME");
  a.targets = {"sub=path:/mnt/nfs/sub"};
  EXPECT_EQ(planError(a), "");
  a.targets = {"nfs=nfs:nfs://srv/export"};
  EXPECT_EQ(planError(a),
            "--volume nfs=rwx: the name nfs is taken; each target needs its own NAME");
  a.targets = {"r=nfs:nfs://srv:20049/export?proto=rdma"};
  EXPECT_EQ(planError(a),
            "--target r=nfs:nfs://srv:20049/export?proto=rdma: proto=rdma needs the RDMA device "
            "in the pod: add --rdma (or --rdma RESOURCE)");
  a.volumes = {"v=rwx:c", "v=ephemeral:d"};
  a.targets.clear();
  EXPECT_EQ(planError(a), "--volume v=ephemeral:d: the name v is taken");
  a.volumes.clear();
  EXPECT_EQ(planError(a),
            "no target: give --volume NAME=rwx:STORAGECLASS, --volume NAME=ephemeral:STORAGECLASS "
            "or --target NAME=nfs:URL (or libnfs:URL)");
}

TEST(KubePlan, RefusesRdmaAndTimingOptions) {
  KubeArgs a = seedArgs();
  a.rdmaResource = "hca";
  EXPECT_EQ(planError(a),
            "--rdma hca: expected a device plugin's resource name DOMAIN/NAME, e.g. "
            "rdma/rdma_shared_device_a");
  a = seedArgs();
  a.startIn = 5;
  EXPECT_EQ(planError(a),
            "--start-in 5: expected 10..86400 seconds (the pods need time to be scheduled and to "
            "pull the image before the first cell)");
  a = seedArgs();
  a.cellSlot = 35;
  EXPECT_EQ(planError(a),
            "--cell-slot 35: expected more than --ramp + --runtime (35 s): a slot also holds the "
            "cell's set-up (connect, lay out the files)");
  a = seedArgs();
  a.mpiOperator = true;
  a.startInGiven = true;
  EXPECT_EQ(planError(a),
            "--start-in and --cell-slot are not for --mpi-operator: under MPI the ranks start each "
            "cell at MPI's barrier");
}

TEST(KubePlan, DecidesStartSlotAndSizes) {
  const KubeRun run = planKubeRun(seedArgs(), kNow);
  EXPECT_EQ(run.startAt, kNow + 120);
  EXPECT_EQ(run.cellSlot, 5 + 30 + kCellSetupAllowanceS);
  ASSERT_EQ(run.targets.size(), 2u);
  EXPECT_EQ(run.targets[0].text(), "nfs=path:/mnt/nfs");
  EXPECT_EQ(run.targets[1].text(), "local=path:/mnt/local");
  ASSERT_EQ(run.volumes.size(), 2u);
  // 4 clients x 1 GiB on the shared one, 1 GiB on each pod's; +10% +1 GiB.
  EXPECT_EQ(run.volumes[0].capacityBytes, 6 * kGiB);
  EXPECT_EQ(run.volumes[1].capacityBytes, 3 * kGiB);
  EXPECT_EQ(defaultCapacityBytes(VolumeKind::SharedRwx, 10, 10 * kGiB), 111 * kGiB);
}

TEST(KubePlan, KeepsTargetsBeforeVolumesInTheOrderGiven) {
  KubeArgs a = seedArgs();
  a.targets = {"tcp=nfs:nfs://srv/export", "anchor=libnfs:nfs://srv/export"};
  const KubeRun run = planKubeRun(a, kNow);
  ASSERT_EQ(run.targets.size(), 4u);
  EXPECT_EQ(run.targets[0].name, "tcp");
  EXPECT_EQ(run.targets[1].name, "anchor");
  EXPECT_EQ(run.targets[2].name, "nfs");
  EXPECT_EQ(run.targets[3].name, "local");
}

}  // namespace
}  // namespace nfsrdma::bench::kube
