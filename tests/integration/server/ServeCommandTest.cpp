// `nfsrdma-server serve` end to end: the real binary on a YAML config runs
// nfs-ganesha in the foreground; an independent client (libnfs's nfs-ls and
// nfs-cat) lists and reads the exported directory; SIGTERM stops it cleanly
// and leaves no ganesha behind. Readiness is the tool's own "ready" line.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "server/ganesha/GaneshaServer.h"
#include "tests/integration/server/ServerTestSupport.h"

namespace fs = std::filesystem;

namespace {

using nfsrdma::testing::Child;
using nfsrdma::testing::requireReal;
using nfsrdma::testing::run;
using nfsrdma::testing::TempDir;

}  // namespace

TEST(ServeCommand, ExportsARealDirectoryToNfsClientsAndStopsOnSigterm) {
  NFSRDMA_REQUIRE_SERVE();
  if (::access("/usr/bin/nfs-ls", X_OK) != 0 || ::access("/usr/bin/nfs-cat", X_OK) != 0) {
    if (requireReal())
      FAIL() << "NFSRDMA_REQUIRE_REAL=1 but libnfs-utils (nfs-ls, nfs-cat) is missing";
    GTEST_SKIP() << "libnfs-utils not installed";
  }
  TempDir dir{"nfsrdma-serve"};
  fs::create_directories(dir.path / "data/sub");
  fs::create_directories(dir.path / "lab");
  std::ofstream(dir.path / "data/readme.txt") << "served by nfsrdma-server\n";
  std::ofstream(dir.path / "cfg.yaml") << "exports:\n"
                                          "  - path: "
                                       << (dir.path / "data").string()
                                       << "\n"
                                          "    pseudo: /data\n"
                                          "    clients:\n"
                                          "      - host: 10.255.0.0/16\n"
                                          "        access: rw\n"
                                          "        insecure: true\n"
                                          "      - host: 127.0.0.1\n"
                                          "        access: ro\n"
                                          "        squash: no_root_squash\n"
                                          "        insecure: true\n"
                                          "  - path: "
                                       << (dir.path / "lab").string()
                                       << "\n"
                                          "    pseudo: /lab\n"
                                          "    clients:\n"
                                          "      - host: 192.168.100.0/24\n"
                                          "        access: rw\n"
                                          "        insecure: true\n"
                                          "transports:\n"
                                          "  bind_address: 127.0.0.1\n"
                                          "nfsd:\n"
                                          "  lease_time: 30\n";

  Child tool({NFSRDMA_SERVER_BIN, "serve", "--port", "0", "--work-dir",
              (dir.path / "work").string(), (dir.path / "cfg.yaml").string()});
  ASSERT_TRUE(tool.readUntil("ready;", std::chrono::seconds(60))) << tool.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(tool.output, m,
                                std::regex("nfs-ganesha pid ([0-9]+) on 127\\.0\\.0\\.1:([0-9]+)")))
      << tool.output;
  const pid_t ganesha = static_cast<pid_t>(std::stol(m[1]));
  const std::string port = m[2];
  EXPECT_NE(tool.output.find("this nfs-ganesha build has no NFS/RDMA"), std::string::npos)
      << tool.output;
  std::ifstream conf(dir.path / "work/ganesha.conf");
  std::ostringstream confText;
  confText << conf.rdbuf();
  EXPECT_NE(confText.str().find("Lease_Lifetime = 30;"), std::string::npos) << confText.str();

  // What serve suggests to a user on this host holds for a real client:
  // /data lists 127.0.0.1 (second, after a network), /lab does not.
  EXPECT_NE(tool.output.find("try: nfsrdma-client ls nfs://127.0.0.1:" + port + "/data\n"),
            std::string::npos)
      << tool.output;
  EXPECT_NE(
      tool.output.find(
          "    note: a client on this host, connecting to 127.0.0.1, is not among its clients, "
          "so nfs-ganesha hides the export from it (NFS4ERR_NOENT); add '- host: 127.0.0.1' "
          "to its clients to try it here\n"),
      std::string::npos)
      << tool.output;
  EXPECT_EQ(tool.output.find("/lab\n"), std::string::npos) << "a try line for /lab:\n"
                                                           << tool.output;

  int status = -1;
  const std::string refused =
      run("nfs-ls 'nfs://127.0.0.1/lab?version=4&nfsport=" + port + "'", &status);
  EXPECT_NE(status, 0) << "a client outside /lab's clients listed it: " << refused;
  EXPECT_NE(refused.find("NFS4ERR_NOENT"), std::string::npos) << refused;
  const std::string url = "nfs://127.0.0.1/data";
  std::string ls = run("nfs-ls '" + url + "?version=4&nfsport=" + port + "'", &status);
  EXPECT_EQ(status, 0) << ls;
  EXPECT_NE(ls.find("readme.txt"), std::string::npos) << ls;
  EXPECT_NE(ls.find("sub"), std::string::npos) << ls;
  std::string cat = run("nfs-cat '" + url + "/readme.txt?version=4&nfsport=" + port + "'", &status);
  EXPECT_EQ(status, 0) << cat;
  EXPECT_NE(cat.find("served by nfsrdma-server"), std::string::npos) << cat;
  // 127.0.0.1 is listed read-only; another client's rw must not leak to it.
  std::ofstream(dir.path / "small.txt") << "must not land\n";
  std::string cp = run("nfs-cp " + (dir.path / "small.txt").string() + " '" + url +
                           "/small.txt?version=4&nfsport=" + port + "'",
                       &status);
  EXPECT_NE(status, 0) << "a write by a read-only client succeeded: " << cp;
  EXPECT_NE(cp.find("NFS4ERR_ROFS"), std::string::npos)
      << cp;  // refused as read-only, not as squashed root
  EXPECT_FALSE(fs::exists(dir.path / "data/small.txt"));
  EXPECT_NE(confText.str().find("  CLIENT {\n    Clients = 127.0.0.1;\n    Access_Type = RO;\n"),
            std::string::npos)
      << confText.str();

  ASSERT_EQ(::kill(tool.pid, SIGTERM), 0);
  const int exit = tool.waitExit(std::chrono::seconds(30));
  ASSERT_NE(exit, -1) << "serve did not stop within 30 s\n" << tool.output;
  EXPECT_TRUE(WIFEXITED(exit) && WEXITSTATUS(exit) == 0) << "wait status " << exit << "\n"
                                                         << tool.output;
  EXPECT_NE(tool.output.find("stopped"), std::string::npos) << tool.output;
  EXPECT_TRUE(::kill(ganesha, 0) != 0 && errno == ESRCH)
      << "ganesha pid " << ganesha << " still exists";
  EXPECT_TRUE(fs::exists(dir.path / "work/ganesha.conf"));
}
