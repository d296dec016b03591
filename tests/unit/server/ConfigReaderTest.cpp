// ConfigReader's bounds on the config file, through nfsrdma-server plan: at
// most 1 MiB, and a device or FIFO refused without reading (or waiting for)
// it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>

#include "tests/unit/server/StagedHost.h"
#include "tests/unit/server/ToolRunner.h"

using nfsrdma::server::testing::oneClient;
using nfsrdma::server::testing::runTool;
using nfsrdma::server::testing::StagedHost;

TEST(ConfigFile, AtTheSizeLimitPassesAndOneByteMoreIsRefused) {
  StagedHost h;
  const std::string body = oneClient("h1");
  std::string text = body + "#" + std::string(1048576 - body.size() - 2, 'x') + "\n";
  ASSERT_EQ(text.size(), 1048576u);
  h.write("cfg.yaml", text);
  const std::string cfg = (h.root / "cfg.yaml").string();
  auto ok = runTool({"--root", h.root.string(), "plan", cfg});
  EXPECT_EQ(ok.status, 0) << ok.err.substr(0, 300);
  h.write("cfg.yaml", text + "\n");
  auto big = runTool({"--root", h.root.string(), "plan", cfg});
  EXPECT_EQ(big.status, 1);
  EXPECT_NE(big.err.find(cfg + ": is 1048577 bytes; a config is at most 1048576 bytes (1 MiB)"),
            std::string::npos)
      << big.err;
}

TEST(ConfigFile, DevZeroIsRefusedNotRead) {
  auto r = runTool({"plan", "/dev/zero"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("/dev/zero: not a regular file"), std::string::npos) << r.err;
}

// A FIFO would block open() until a writer comes; the tool must not wait.
TEST(ConfigFile, FifoIsRefusedWithoutBlocking) {
  StagedHost h;  // only for a temporary directory; the FIFO is outside its snapshot
  const std::string fifo = h.root.string() + ".fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto run = std::async(std::launch::async, [&] { return runTool({"plan", fifo}); });
  if (run.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    ADD_FAILURE() << "plan blocked on a FIFO";
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // lets the reader go
    if (fd >= 0) ::close(fd);
  }
  auto r = run.get();
  ::unlink(fifo.c_str());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(fifo + ": not a regular file"), std::string::npos) << r.err;
}
