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

namespace nfsrdma::bench {
namespace {

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::pair<int, std::string> shell(const std::string& cmd) {
  std::string out;
  FILE* f = ::popen(("timeout 300 bash -c " + quoted(cmd) + " 2>&1").c_str(), "r");
  if (f == nullptr) return {-1, ""};
  std::array<char, 4096> buf{};
  for (std::size_t n = 0; (n = std::fread(buf.data(), 1, buf.size(), f)) > 0;)
    out.append(buf.data(), n);
  const int status = ::pclose(f);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

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
    for (const auto& w : argv) cmd += quoted(w) + " ";
    script += cmd + "> " + (work / ("pod" + std::to_string(i) + ".log")).string() + " 2>&1 &\n";
  }
  script += "wait\n";
  const auto pods = shell(script);
  ASSERT_EQ(pods.first, 0) << pods.second;
  std::string logs;
  for (int i = 0; i < 3; ++i) logs += (work / ("pod" + std::to_string(i) + ".log")).string() + " ";
  const auto agg = shell(std::string(NFSRDMA_BENCH_BIN) + " aggregate --clients 3 " + logs);
  EXPECT_EQ(agg.first, 0) << agg.second;
  EXPECT_NE(agg.second.find("4k-randread ours:"), std::string::npos) << agg.second;
  EXPECT_NE(agg.second.find("128k-write ours:"), std::string::npos) << agg.second;
  EXPECT_NE(agg.second.find(" clients     3"), std::string::npos) << agg.second;
  EXPECT_NE(agg.second.find(" overlap   "), std::string::npos) << "the pods ran at the same time\n"
                                                               << agg.second;
  EXPECT_EQ(agg.second.find("no overlap"), std::string::npos) << agg.second;
  server.reset();
  std::error_code ec;
  std::filesystem::remove_all(work, ec);
}

}  // namespace
}  // namespace nfsrdma::bench
