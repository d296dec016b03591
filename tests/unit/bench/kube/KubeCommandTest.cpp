// `nfsrdma-bench kube` as the tool runs it: --help, the exit statuses of the
// command-line shape (2 for a line that cannot run, 1 for a failure), the
// manifest on stdout and the directory of --out.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "bench/BenchCommands.h"
#include "tests/unit/bench/CommandCapture.h"
#include "tests/unit/bench/ScratchDir.h"

namespace nfsrdma::bench {
namespace {

using testing::runCommand;
using testing::ScratchDir;

const std::vector<std::string> kSeed = {"kube",
                                        "--clients",
                                        "4",
                                        "--image",
                                        "reg.example/nfsrdma:1",
                                        "--volume",
                                        "nfs=rwx:nfs-client",
                                        "--volume",
                                        "local=ephemeral:local-path",
                                        "--profiles",
                                        "4k-randread,128k-read,4m-write"};

std::vector<std::string> seedWith(std::vector<std::string> extra) {
  std::vector<std::string> args = kSeed;
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(KubeCommand, HelpListsTheOptionsOnStdout) {
  const auto r = runCommand(runKubeCommand, {"kube", "--help"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out.rfind("usage: nfsrdma-bench kube --clients N --image IMAGE [options]\n", 0), 0u);
  for (const char* option : {"--volume", "--rdma", "--host-network", "--start-in", "--cell-slot",
                             "--mpi-operator", "--out"}) {
    EXPECT_NE(r.out.find(option), std::string::npos) << option;
  }
  EXPECT_EQ(r.err, "");
}

TEST(KubeCommand, UsageErrorsExitTwoWithOneLine) {
  auto r = runCommand(runKubeCommand, {"kube", "--image", "i"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "nfsrdma-bench kube: the option '--clients' is required but missing\n");
  r = runCommand(runKubeCommand, seedWith({"4"}));
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(
      r.err,
      "nfsrdma-bench kube: unexpected argument '4': every setting is an option (see --help)\n");
  r = runCommand(runKubeCommand, seedWith({"--volume", "x=rwx:"}));
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err,
            "nfsrdma-bench kube: --volume x=rwx:: expected NAME=rwx:STORAGECLASS[:SIZE] or "
            "NAME=ephemeral:STORAGECLASS[:SIZE]\n");
  EXPECT_EQ(r.out, "");
  r = runCommand(runKubeCommand, seedWith({"--mpi-operator", "--start-in", "300"}));
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("not for --mpi-operator"), std::string::npos) << r.err;
}

TEST(KubeCommand, PrintsTheManifestAndWhenToApplyIt) {
  const auto r = runCommand(runKubeCommand, seedWith({"--rdma", "rdma/hca_shared_devices_a"}));
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("kind: Job\n"), std::string::npos);
  EXPECT_NE(r.out.find("rdma/hca_shared_devices_a: 1"), std::string::npos);
  EXPECT_NE(r.err.find("nfsrdma-bench kube: the first cell starts at "), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("(in 120 s): apply the manifest before then"), std::string::npos) << r.err;
}

TEST(KubeCommand, OutWritesOneFilePerObjectIntoANewDirectory) {
  ScratchDir dir("kube-out");
  const std::string out = dir.str() + "/run";
  auto r = runCommand(runKubeCommand, seedWith({"--out", out}));
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "wrote 3 files to " + out + "; kubectl apply -f " + out + "\n");
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(out))
    names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names,
            (std::vector<std::string>{"00-settings.yaml", "10-volume-nfs.yaml", "20-job.yaml"}));
  // A second render into it would leave the first one's files to be applied too.
  r = runCommand(runKubeCommand, seedWith({"--out", out}));
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "nfsrdma-bench kube: --out " + out +
                       ": not empty; give a new or empty directory (kubectl apply -f DIR would "
                       "also apply the files already there)\n");
}

}  // namespace
}  // namespace nfsrdma::bench
