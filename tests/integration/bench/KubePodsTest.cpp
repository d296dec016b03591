// The Kubernetes run without Kubernetes: `nfsrdma-bench kube`'s plan for
// three clients, each pod's command exactly as the kubelet would expand it
// (podArgv), run here as three processes against a real nfs-ganesha on
// 127.0.0.1 (the benchmark's embedded server, started by this test); their
// logs then go through `nfsrdma-bench aggregate`, as `kubectl logs` would.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "bench/file/FileEmbedded.h"
#include "bench/kube/KubeCommandLine.h"
#include "bench/kube/KubeRun.h"
#include "tests/integration/bench/ShellRun.h"

namespace nfsrdma::bench {
namespace {

TEST(KubePods, TheRenderedPodsCommandsRunHereAndAggregate) {
  const auto work =
      std::filesystem::temp_directory_path() / ("nfsrdma-kube-" + std::to_string(::getpid()));
  std::filesystem::create_directories(work);
  std::unique_ptr<EmbeddedServer> server;
  try {
    server = std::make_unique<EmbeddedServer>(work);
  } catch (const std::exception& e) {
    GTEST_SKIP() << e.what();
  }
  kube::KubeArgs a;
  a.image = "registry.example/nfsrdma:1";
  a.clients = 3;
  a.targets = {"ours=nfs:" + server->url()};
  a.profiles = "4k-randread,128k-write";
  a.runtime = 1;
  a.ramp = 0.2;
  a.size = "8m";
  a.startIn = 10;  // the least kube allows; rendered 7 s ago, so the pods start in 3 s
  a.cellSlot = 6;
  a.startInGiven = true;
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  const kube::KubeRun run = kube::planKubeRun(a, now - 7);
  std::string script;
  for (std::uint32_t i = 0; i < 3; ++i) {
    std::vector<std::string> argv = kube::podArgv(run, i);
    ASSERT_EQ(argv.at(0), "nfsrdma-bench");
    argv[0] = NFSRDMA_BENCH_BIN;
    std::string cmd;
    for (const auto& w : argv) cmd += shellQuoted(w) + " ";
    script += cmd + "> " + (work / ("pod" + std::to_string(i) + ".log")).string() + " 2>&1 &\n";
  }
  script += "wait\n";
  const Ran pods = runShell(script);
  ASSERT_EQ(pods.status, 0) << pods.out;
  std::string logs;
  for (int i = 0; i < 3; ++i) logs += (work / ("pod" + std::to_string(i) + ".log")).string() + " ";
  const Ran agg = runShell(std::string(NFSRDMA_BENCH_BIN) + " aggregate --clients 3 " + logs);
  EXPECT_EQ(agg.status, 0) << agg.out;
  EXPECT_NE(agg.out.find("4k-randread ours:"), std::string::npos) << agg.out;
  EXPECT_NE(agg.out.find("128k-write ours:"), std::string::npos) << agg.out;
  EXPECT_NE(agg.out.find(" clients     3"), std::string::npos) << agg.out;
  EXPECT_NE(agg.out.find(" overlap   "), std::string::npos) << "the pods ran at the same time\n"
                                                            << agg.out;
  EXPECT_EQ(agg.out.find("no overlap"), std::string::npos) << agg.out;
  server.reset();
  std::error_code ec;
  std::filesystem::remove_all(work, ec);
}

}  // namespace
}  // namespace nfsrdma::bench
