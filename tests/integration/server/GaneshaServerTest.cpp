// Integration tests for GaneshaServer against the real nfs-ganesha: the
// server must be reachable by an independent NFS client (libnfs's nfs-ls),
// keep all its state in its work directory and leave no process behind.
// Without ganesha the tests skip with the reason, or fail when
// NFSRDMA_REQUIRE_REAL=1 (CI), so a green run means ganesha really ran.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "server/ganesha/GaneshaServer.h"
#include "tests/integration/server/ServerTestSupport.h"

namespace fs = std::filesystem;
using nfsrdma::server::GaneshaExportSpec;
using nfsrdma::server::GaneshaOptions;
using nfsrdma::server::GaneshaServer;

namespace {

using nfsrdma::testing::requireReal;
using nfsrdma::testing::run;
using nfsrdma::testing::TempDir;

#define NFSRDMA_REQUIRE_GANESHA()                                                  \
  do {                                                                             \
    if (auto why = GaneshaServer::unavailableReason()) {                           \
      if (requireReal()) FAIL() << "NFSRDMA_REQUIRE_REAL=1 but " << *why;          \
      GTEST_SKIP() << *why;                                                        \
    }                                                                              \
    if (::access("/usr/bin/nfs-ls", X_OK) != 0) {                                  \
      if (requireReal()) FAIL() << "NFSRDMA_REQUIRE_REAL=1 but nfs-ls is missing"; \
      GTEST_SKIP() << "nfs-ls not installed (apt-get install libnfs-utils)";       \
    }                                                                              \
  } while (false)

std::string nfsLs(const GaneshaServer& s, const std::string& pseudo) {
  int status = -1;
  std::string out = run("nfs-ls 'nfs://" + s.address() + pseudo +
                            "?version=4&nfsport=" + std::to_string(s.port()) + "'",
                        &status);
  EXPECT_EQ(status, 0) << out;
  return out;
}

bool processExists(pid_t pid) {
  return ::kill(pid, 0) == 0 || errno != ESRCH;
}

GaneshaOptions oneExport(const fs::path& dir, const std::string& pseudo = "/export") {
  GaneshaOptions o;
  o.exports.push_back(GaneshaExportSpec{dir, pseudo});
  return o;
}

}  // namespace

TEST(GaneshaServer, ServesAFileToNfsLsAndStopReapsTheProcess) {
  NFSRDMA_REQUIRE_GANESHA();
  TempDir data;
  std::ofstream(data.path / "hello-from-nfsrdma.txt") << "hello\n";

  auto server = GaneshaServer::start(oneExport(data.path));
  const pid_t pid = server.pid();
  const fs::path work = server.workDir();
  ASSERT_GT(pid, 0);
  EXPECT_NE(server.port(), 0);
  EXPECT_EQ(server.address(), "127.0.0.1");
  EXPECT_TRUE(processExists(pid));
  EXPECT_TRUE(fs::exists(server.logPath()));
  // Recovery state stays inside the work directory.
  EXPECT_TRUE(fs::is_directory(work / "recovery" / "v4recov"));

  EXPECT_NE(nfsLs(server, "/export").find("hello-from-nfsrdma.txt"), std::string::npos);

  server.stop();
  EXPECT_EQ(server.pid(), 0);
  EXPECT_FALSE(processExists(pid));
  EXPECT_FALSE(fs::exists(work)) << "temporary work dir must be removed on stop";
  server.stop();  // idempotent
}

TEST(GaneshaServer, DestructorStopsAndMoveTransfersOwnership) {
  NFSRDMA_REQUIRE_GANESHA();
  TempDir data;
  pid_t pid = 0;
  {
    auto a = GaneshaServer::start(oneExport(data.path));
    pid = a.pid();
    GaneshaServer b = std::move(a);
    EXPECT_EQ(a.pid(), 0);  // NOLINT(bugprone-use-after-move): checking the moved-from state
    EXPECT_EQ(b.pid(), pid);
    EXPECT_TRUE(processExists(pid));
  }
  EXPECT_FALSE(processExists(pid));
}

TEST(GaneshaServer, TwoServersSideBySideWithOwnWorkDirsAndReadOnlyExport) {
  NFSRDMA_REQUIRE_GANESHA();
  TempDir dataA, dataB, workB;
  std::ofstream(dataA.path / "a.txt") << "a";
  std::ofstream(dataB.path / "b.txt") << "b";
  auto a = GaneshaServer::start(oneExport(dataA.path, "/alpha"));
  GaneshaOptions ob = oneExport(dataB.path, "/beta");
  ob.exports[0].readOnly = true;
  ob.workDir = workB.path / "ganesha";
  auto b = GaneshaServer::start(ob);
  EXPECT_NE(a.port(), b.port());

  EXPECT_NE(nfsLs(a, "/alpha").find("a.txt"), std::string::npos);
  std::string lsB = nfsLs(b, "/beta");
  EXPECT_NE(lsB.find("b.txt"), std::string::npos);
  EXPECT_EQ(lsB.find("a.txt"), std::string::npos);

  // The caller's work dir holds config, log, pid file and recovery state and
  // survives stop().
  std::ifstream conf(b.configPath());
  std::ostringstream buf;
  buf << conf.rdbuf();
  const std::string text = buf.str();
  EXPECT_NE(text.find("Access_Type = RO;"), std::string::npos);
  EXPECT_NE(text.find("RecoveryRoot = \"" + (workB.path / "ganesha" / "recovery").string() + "\";"),
            std::string::npos);
  b.stop();
  EXPECT_TRUE(fs::exists(workB.path / "ganesha" / "ganesha.log"));
  EXPECT_TRUE(fs::exists(workB.path / "ganesha" / "recovery"));
}

TEST(GaneshaServer, MissingExportDirectoryIsRefusedBeforeStarting) {
  NFSRDMA_REQUIRE_GANESHA();
  TempDir data;
  try {
    GaneshaServer::start(oneExport(data.path / "no-such-dir"));
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-dir': not an existing directory"),
              std::string::npos)
        << e.what();
  }
}

// A taken port is named in one line before ganesha starts (ganesha itself
// would log a page of DBUS and bind errors, then exit).
TEST(GaneshaServer, PortAlreadyTakenIsNamedBeforeGaneshaStarts) {
  NFSRDMA_REQUIRE_GANESHA();
  TempDir data;
  // Hold a listening socket on a port, then ask ganesha for that same port.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof sin;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len), 0);
  GaneshaOptions o = oneExport(data.path);
  o.port = ntohs(sin.sin_port);
  o.startTimeout = std::chrono::seconds(20);
  try {
    auto s = GaneshaServer::start(o);
    ::close(fd);
    FAIL() << "expected ganesha to fail on a taken port " << o.port;
  } catch (const std::runtime_error& e) {
    ::close(fd);
    const std::string msg = e.what();
    EXPECT_EQ(msg, "cannot start nfs-ganesha: port " + std::to_string(o.port) +
                       " on 127.0.0.1 is already in use (another NFS server?); choose another "
                       "port, or 0 for a "
                       "free one");
  }
}
