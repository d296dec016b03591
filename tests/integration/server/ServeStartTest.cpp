// What `nfsrdma-server serve` checks as it starts the real nfs-ganesha: it is
// ready only when ganesha's log reports no configuration error (else it fails
// with those lines quoted); its --work-dir is a new or empty directory, and
// nothing in it is written through a link; a serve killed with SIGKILL
// leaves its temporary work directory, and the next start removes it and
// says so.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "server/ganesha/GaneshaServer.h"
#include "tests/integration/server/ServerTestSupport.h"

namespace fs = std::filesystem;

namespace {

using nfsrdma::testing::Child;
using nfsrdma::testing::PrivateEtc;
using nfsrdma::testing::readFile;
using nfsrdma::testing::requireReal;
using nfsrdma::testing::TempDir;

// A config exporting `path` to one client.
std::string writeConfig(const fs::path& dir, const fs::path& path, const std::string& host) {
  std::ofstream(dir / "cfg.yaml") << "exports:\n  - path: " << path.string()
                                  << "\n    pseudo: /data\n"
                                  << "    clients:\n      - host: '" << host
                                  << "'\n        access: ro\n        insecure: true\n"
                                     "transports:\n  bind_address: 127.0.0.1\n";
  return (dir / "cfg.yaml").string();
}

// Whether serve ended within `limit` with exit status 1, having never said
// "ready" (else why not, with its output).
::testing::AssertionResult serveFailed(Child& tool, std::chrono::seconds limit) {
  const int status = tool.waitExit(limit);
  if (status == -1) return ::testing::AssertionFailure() << "serve still runs:\n" << tool.output;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 1)
    return ::testing::AssertionFailure() << "wait status " << status << "\n" << tool.output;
  if (tool.output.find("ready;") != std::string::npos)
    return ::testing::AssertionFailure() << "serve said ready:\n" << tool.output;
  return ::testing::AssertionSuccess();
}

// Waits (bounded) for serve's "ready;" line: the ganesha pid it printed, or
// 0 when it did not come.
pid_t ganeshaWhenReady(Child& tool) {
  std::smatch m;
  if (!tool.readUntil("ready;", std::chrono::seconds(90)) ||
      !std::regex_search(tool.output, m, std::regex("nfs-ganesha pid ([0-9]+) on")))
    return 0;
  return static_cast<pid_t>(std::stol(m[1]));
}

bool processGone(pid_t pid) {
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

// Waits (bounded) until `pid` is gone.
bool waitGone(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!processGone(pid)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

}  // namespace

// ganesha cannot export /proc (the VFS FSAL has no handles there): it logs
// CONFIG CRIT lines, drops the export and serves nothing. serve must not say
// "ready"; it fails with those lines as ganesha wrote them.
TEST(ServeStart, AConfigurationErrorInGaneshasLogFailsServeWithTheLinesQuoted) {
  NFSRDMA_REQUIRE_SERVE();
  TempDir dir{"nfsrdma-serve-err"};
  Child tool({NFSRDMA_SERVER_BIN, "serve", "--port", "0", "--work-dir",
              (dir.path / "work").string(), writeConfig(dir.path, "/proc", "127.0.0.1")});
  ASSERT_TRUE(serveFailed(tool, std::chrono::seconds(90)));
  EXPECT_NE(tool.output.find(
                "nfs-ganesha reported errors in the configuration it was given and would serve "
                "without what they name:\n"),
            std::string::npos)
      << tool.output;
  const std::string log = readFile(dir.path / "work/ganesha.log");
  std::istringstream lines(log);
  int crit = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find(":CONFIG :CRIT :") == std::string::npos) continue;
    ++crit;
    EXPECT_NE(tool.output.find("\n" + line + "\n"), std::string::npos)
        << "not quoted: " << line << "\n"
        << tool.output;
  }
  EXPECT_GT(crit, 0) << "ganesha logged no CONFIG CRIT line:\n" << log;
  EXPECT_NE(tool.output.find("config " + (dir.path / "work/ganesha.conf").string() + ", log "),
            std::string::npos)
      << tool.output;
}

// A client name ganesha cannot resolve is a configuration error it reports
// at WARN level, and drops the client; one its config cannot carry (a label
// starting with a digit) is resolved by serve, which names it before ganesha
// starts.
TEST(ServeStart, AClientNameThatDoesNotResolveFailsServe) {
  NFSRDMA_REQUIRE_SERVE();
  TempDir dir{"nfsrdma-serve-name"};
  fs::create_directories(dir.path / "data");
  const PrivateEtc etc({{"hosts", "127.0.0.1 localhost\n"}, {"nsswitch.conf", "hosts: files\n"}});
  Child tool({NFSRDMA_SERVER_BIN, "serve", "--port", "0",
              writeConfig(dir.path, dir.path / "data", "nosuch.invalid")},
             [&etc] { return etc.enter(); });
  const ::testing::AssertionResult failed = serveFailed(tool, std::chrono::seconds(90));
  if (tool.output.find("child setup: ") != std::string::npos && !requireReal())
    GTEST_SKIP() << "no private /etc for serve here: " << tool.output;
  ASSERT_TRUE(failed);
  EXPECT_TRUE(std::regex_search(
      tool.output, std::regex("config_errs_to_log :CONFIG :[A-Z]+ :Config File \\(.*"
                              "ganesha.conf:[0-9]+\\): Client \\(nosuch.invalid\\) not "
                              "found")))
      << tool.output;

  Child early({NFSRDMA_SERVER_BIN, "serve", "--port", "0",
               writeConfig(dir.path, dir.path / "data", "9nosuch.invalid")},
              [&etc] { return etc.enter(); });
  ASSERT_TRUE(serveFailed(early, std::chrono::seconds(30)));
  EXPECT_NE(early.output.find(
                "nfsrdma-server: ganesha export '" + (dir.path / "data").string() +
                "': client '9nosuch.invalid': cannot resolve host name '9nosuch.invalid': "),
            std::string::npos)
      << early.output;
}

// --work-dir with something in it is refused before anything is written:
// serve used to write its config, log, pid and stdout over what was there.
TEST(ServeStart, AWorkDirThatIsNotEmptyIsRefusedAndLeftAsItWas) {
  NFSRDMA_REQUIRE_SERVE();
  TempDir dir{"nfsrdma-serve-wd"};
  fs::create_directories(dir.path / "data");
  fs::create_directories(dir.path / "work");
  std::ofstream(dir.path / "work/ganesha.conf") << "precious\n";
  const std::string config = writeConfig(dir.path, dir.path / "data", "127.0.0.1");
  Child tool({NFSRDMA_SERVER_BIN, "serve", "--port", "0", "--work-dir",
              (dir.path / "work").string(), config});
  ASSERT_TRUE(serveFailed(tool, std::chrono::seconds(60)));
  EXPECT_NE(
      tool.output.find(
          "nfsrdma-server: cannot use '" + (dir.path / "work").string() +
          "' as nfs-ganesha's work directory: it is not empty (holds ganesha.conf) and no run "
          "of ours used it (no nfsrdma-run in it); give a new directory (it is made), an empty "
          "one or one an earlier run of ours used: ganesha.conf, ganesha.log, ganesha.pid, "
          "ganesha.stdout, recovery/ and nfsrdma-run are written there\n"),
      std::string::npos)
      << tool.output;
  EXPECT_EQ(readFile(dir.path / "work/ganesha.conf"), "precious\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path / "work"), fs::directory_iterator()), 1);

  // An empty directory others may write in: they could put a link where
  // ganesha writes.
  fs::create_directories(dir.path / "shared");
  ::chmod((dir.path / "shared").c_str(), 01777);
  Child shared({NFSRDMA_SERVER_BIN, "serve", "--port", "0", "--work-dir",
                (dir.path / "shared").string(), config});
  ASSERT_TRUE(serveFailed(shared, std::chrono::seconds(60)));
  EXPECT_NE(shared.output.find(
                "nfsrdma-server: cannot use '" + (dir.path / "shared").string() +
                "' as nfs-ganesha's work directory: others may write in it (mode 1777), so they "
                "could put a link where ganesha writes; give a new directory (it is made) or one "
                "only we may write\n"),
            std::string::npos)
      << shared.output;
  EXPECT_TRUE(fs::is_empty(dir.path / "shared"));
}

// A work directory an earlier serve used is used again once that serve has
// ended (its recovery state stays), and refused while it runs.
TEST(ServeStart, AWorkDirIsUsedAgainOnceTheServeThatUsedItEnded) {
  NFSRDMA_REQUIRE_SERVE();
  TempDir dir{"nfsrdma-serve-again"};
  fs::create_directories(dir.path / "data");
  const std::string config = writeConfig(dir.path, dir.path / "data", "127.0.0.1");
  const std::string work = (dir.path / "work").string();
  Child first({NFSRDMA_SERVER_BIN, "serve", "--port", "0", "--work-dir", work, config});
  const pid_t ganesha = ganeshaWhenReady(first);
  ASSERT_GT(ganesha, 0) << first.output;

  Child second({NFSRDMA_SERVER_BIN, "serve", "--port", "0", "--work-dir", work, config});
  ASSERT_TRUE(serveFailed(second, std::chrono::seconds(60)));
  EXPECT_NE(second.output.find("nfsrdma-server: cannot use '" + work +
                               "' as nfs-ganesha's work directory: the "
                               "nfs-ganesha in its ganesha.pid (" +
                               std::to_string(ganesha) +
                               ") still runs; stop it first, or "
                               "give another directory\n"),
            std::string::npos)
      << second.output;

  ASSERT_EQ(::kill(first.pid, SIGTERM), 0);
  ASSERT_NE(first.waitExit(std::chrono::seconds(30)), -1) << first.output;
  Child third({NFSRDMA_SERVER_BIN, "serve", "--port", "0", "--work-dir", work, config});
  EXPECT_GT(ganeshaWhenReady(third), 0) << third.output;
  ASSERT_EQ(::kill(third.pid, SIGTERM), 0);
  EXPECT_NE(third.waitExit(std::chrono::seconds(30)), -1) << third.output;
}

// Links planted where serve's files go lead nowhere: neither the file a link
// names is written nor a dangling one's target made.
TEST(ServeStart, LinksInTheWorkDirAreNotFollowed) {
  NFSRDMA_REQUIRE_SERVE();
  TempDir dir{"nfsrdma-serve-ln"};
  fs::create_directories(dir.path / "data");
  fs::create_directories(dir.path / "work");
  std::ofstream(dir.path / "victim.conf") << "not ganesha's\n";
  fs::create_symlink(dir.path / "victim.conf", dir.path / "work/ganesha.conf");
  fs::create_symlink(dir.path / "made-through-a-link.log", dir.path / "work/ganesha.log");
  fs::create_symlink(dir.path / "made-through-a-link.pid", dir.path / "work/ganesha.pid");
  fs::create_symlink(dir.path / "made-through-a-link.stdout", dir.path / "work/ganesha.stdout");
  Child tool({NFSRDMA_SERVER_BIN, "serve", "--port", "0", "--work-dir",
              (dir.path / "work").string(), writeConfig(dir.path, dir.path / "data", "127.0.0.1")});
  ASSERT_TRUE(serveFailed(tool, std::chrono::seconds(60)));
  EXPECT_NE(tool.output.find("as nfs-ganesha's work directory: it is not empty (holds "),
            std::string::npos)
      << tool.output;
  EXPECT_EQ(readFile(dir.path / "victim.conf"), "not ganesha's\n");
  for (const char* made :
       {"made-through-a-link.log", "made-through-a-link.pid", "made-through-a-link.stdout"})
    EXPECT_FALSE(fs::exists(dir.path / made)) << made;
  EXPECT_TRUE(fs::is_symlink(dir.path / "work/ganesha.log"));
}

// SIGKILL leaves serve no time to remove its temporary work directory (its
// ganesha stops on its parent-death signal). The next start finds that the
// pid which made it no longer runs, removes it and says so in one line.
TEST(ServeStart, AKilledServesWorkDirIsRemovedByTheNextStart) {
  NFSRDMA_REQUIRE_SERVE();
  TempDir dir{"nfsrdma-serve-kill"};
  fs::create_directories(dir.path / "data");
  const std::string config = writeConfig(dir.path, dir.path / "data", "127.0.0.1");
  // A temp directory of the test's own: no other run's start sweeps it first.
  const fs::path tmp = dir.path / "tmp";
  fs::create_directories(tmp);
  const auto inTmp = [&tmp] {
    ::setenv("TMPDIR", tmp.c_str(), 1);
    return std::string();
  };
  Child first({NFSRDMA_SERVER_BIN, "serve", "--port", "0", config}, inTmp);
  const pid_t ganesha = ganeshaWhenReady(first);
  ASSERT_GT(ganesha, 0) << first.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(first.output, m, std::regex("  log (\\S+)/ganesha.log\n")))
      << first.output;
  const fs::path left = m[1].str();
  const pid_t killed = first.pid;
  ASSERT_EQ(::kill(killed, SIGKILL), 0);
  ASSERT_NE(first.waitExit(std::chrono::seconds(10)), -1);
  ASSERT_TRUE(waitGone(ganesha, std::chrono::seconds(30)))
      << "ganesha " << ganesha << " outlived its parent";
  ASSERT_TRUE(fs::is_directory(left)) << left;
  ASSERT_EQ(left.parent_path(), tmp);

  Child next({NFSRDMA_SERVER_BIN, "serve", "--port", "0", config}, inTmp);
  ASSERT_GT(ganeshaWhenReady(next), 0) << next.output;
  EXPECT_TRUE(std::regex_search(
      next.output, std::regex("(^|\n)note: removed the nfs-ganesha work director(y|ies) "
                              "left by (a run|runs) that ended without removing (it|them): "
                              "[^\n]*" +
                              left.string() + " \\(pid " + std::to_string(killed) + "\\)")))
      << next.output;
  EXPECT_FALSE(fs::exists(left)) << left;
  ASSERT_EQ(::kill(next.pid, SIGTERM), 0);
  EXPECT_NE(next.waitExit(std::chrono::seconds(30)), -1) << next.output;
}
