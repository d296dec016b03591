// ConfigHostChecks (validateOnHost) through nfsrdma-server plan against a
// staged --root, and on the live host: export paths, the RDMA device and
// netdev found through links inside the root and never above it, and root
// given to every host only with --allow-insecure.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "server/ConfigHostChecks.h"
#include "server/HostPaths.h"
#include "server/ServerConfig.h"
#include "tests/unit/server/StagedHost.h"
#include "tests/unit/server/ToolRunner.h"

using nfsrdma::server::ConfigError;
using nfsrdma::server::parseServerConfig;
using nfsrdma::server::testing::oneClient;
using nfsrdma::server::testing::runTool;
using nfsrdma::server::testing::StagedHost;

// Every spelling that matches all hosts needs --allow-insecure for rw +
// no_root_squash, and passes with it.
TEST(AllowInsecure, CoversEveryWorldReachableSpelling) {
  for (const std::string host : {"*", "0.0.0.0/0", "::/0", "10.0.0.0/0", "10.0.0.0/0.0.0.0",
                                 "fe80::/0", "*.*", "?*", "**"}) {
    SCOPED_TRACE(host);
    StagedHost h;
    h.write("cfg.yaml", oneClient(host, "squash: no_root_squash"));
    const std::string cfg = (h.root / "cfg.yaml").string();
    auto refused = runTool({"--root", h.root.string(), "plan", cfg});
    EXPECT_EQ(refused.status, 1) << refused.err;
    EXPECT_NE(refused.err.find("(rw + no_root_squash to '" + host + "')"), std::string::npos)
        << refused.err;
    auto allowed = runTool({"--root", h.root.string(), "--allow-insecure", "plan", cfg});
    EXPECT_EQ(allowed.status, 0) << allowed.err;
  }
}

// Squashed users mapped to uid 0 (or gid 0) are root under another name:
// with root_squash root stays uid 0, with all_squash every user becomes it.
TEST(AllowInsecure, CoversSquashingToIdZero) {
  for (const auto& [host, extra, shown] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"*", "options: [anonuid=0]", "(rw + anonuid=0 to '*': anonuid=0 maps"},
           {"0.0.0.0/0", "squash: all_squash\n        options: [anonuid=0]",
            "(rw + anonuid=0 to '0.0.0.0/0': anonuid=0 maps"},
           {"*.*", "options: [anonuid=7, anonuid=0]", "(rw + anonuid=0 to '*.*'"},
           {"::/0", "options: [anongid=0]", "(rw + anongid=0 to '::/0': anongid=0 maps"}}) {
    SCOPED_TRACE(host + " " + extra);
    StagedHost h;
    h.write("cfg.yaml", oneClient(host, extra));
    const std::string cfg = (h.root / "cfg.yaml").string();
    auto refused = runTool({"--root", h.root.string(), "plan", cfg});
    EXPECT_EQ(refused.status, 1) << refused.err;
    EXPECT_NE(refused.err.find(shown), std::string::npos) << refused.err;
    auto allowed = runTool({"--root", h.root.string(), "--allow-insecure", "plan", cfg});
    EXPECT_EQ(allowed.status, 0) << allowed.err;
  }
}

TEST(AllowInsecure, NarrowSpecsAndReadOnlyNeedNoFlag) {
  for (const auto& [host, extra] : std::vector<std::pair<std::string, std::string>>{
           {"10.0.0.0/8", "squash: no_root_squash"},
           {"*.example.com", "squash: no_root_squash"},
           {"*", "access: ro\n        squash: no_root_squash"},
           {"0.0.0.0/0", "squash: root_squash"},
           {"10.0.0.0/8", "options: [anonuid=0, anongid=0]"},
           {"*", "access: ro\n        options: [anonuid=0]"},
           {"*", "options: [anonuid=65534, anongid=100]"}}) {
    SCOPED_TRACE(host);
    StagedHost h;
    h.write("cfg.yaml", oneClient(host, extra));
    auto r = runTool({"--root", h.root.string(), "plan", (h.root / "cfg.yaml").string()});
    EXPECT_EQ(r.status, 0) << r.err;
  }
}

// Host checks resolve every link inside the root (openat2 RESOLVE_IN_ROOT),
// as the host would with the root as "/": sysfs is links all the way
// (/sys/class/infiniband/rxe0 -> ../../devices/...), and a link that leads
// out of the root must not find what lies outside it.
namespace {

// A directory beside (not under) the staged root, removed with the test.
struct OutsideDir {
  explicit OutsideDir(const StagedHost& h) : dir(h.root.string() + ".outside") {
    std::filesystem::create_directories(dir / "rxe0/ports/1");
    std::filesystem::create_directories(dir / "eth0");
    std::filesystem::create_directories(dir / "data");
  }
  ~OutsideDir() { std::filesystem::remove_all(dir); }
  std::filesystem::path dir;
};

// Moves a staged entry to `to` (a root-relative path) and links `rel` to `target`.
void replaceWithLink(const StagedHost& h, const std::string& rel, const std::string& to,
                     const std::string& target) {
  if (!to.empty()) {
    std::filesystem::create_directories((h.root / to).parent_path());
    std::filesystem::rename(h.root / rel, h.root / to);
  } else {
    std::filesystem::remove_all(h.root / rel);
  }
  std::filesystem::create_symlink(target, h.root / rel);
}

nfsrdma::server::testing::ToolRun planOf(const StagedHost& h, const std::string& yaml) {
  h.write("cfg.yaml", yaml);
  return runTool({"--root", h.root.string(), "plan", (h.root / "cfg.yaml").string()});
}

// The run was refused (status 1) with `message` in what it printed.
void expectRefused(const nfsrdma::server::testing::ToolRun& r, const std::string& message) {
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos)
      << "expected:\n  " << message << "\ngot:\n  " << r.err;
}

const std::string kDeviceAndNetdev =
    "exports:\n  - path: /srv/nfsrdma/data\n    clients: [{host: 10.0.0.0/24}]\n"
    "rdma:\n  device: rxe0\n  netdev: eth0\n";

}  // namespace

TEST(HostChecks, SysfsLinksInsideTheRootAreFollowed) {
  StagedHost h;
  replaceWithLink(h, "sys/class/infiniband/rxe0", "sys/devices/virtual/infiniband/rxe0",
                  "../../devices/virtual/infiniband/rxe0");
  replaceWithLink(h, "sys/class/net/eth0", "sys/devices/virtual/net/eth0",
                  "/sys/devices/virtual/net/eth0");  // absolute: read with the root as "/"
  const auto r = planOf(h, kDeviceAndNetdev);
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(HostChecks, SysfsLinksLeavingTheRootFindNothing) {
  for (const bool absolute : {true, false}) {
    SCOPED_TRACE(absolute ? "absolute link" : "relative link climbing above the root");
    StagedHost h;
    const OutsideDir out(h);
    const std::string up = "../../../../" + out.dir.filename().string();  // from sys/class/x/
    replaceWithLink(h, "sys/class/infiniband/rxe0", "",
                    absolute ? (out.dir / "rxe0").string() : up + "/rxe0");
    expectRefused(planOf(h, kDeviceAndNetdev),
                  "cfg.yaml:5:11: rdma device 'rxe0' does not exist (looked at "
                  "/sys/class/infiniband/rxe0 (under --root " +
                      h.root.string() + "), where symlinks resolve with the root as '/'");
    std::filesystem::remove(h.root / "sys/class/infiniband/rxe0");
    h.mkdir("sys/class/infiniband/rxe0");
    replaceWithLink(h, "sys/class/net/eth0", "",
                    absolute ? (out.dir / "eth0").string() : up + "/eth0");
    expectRefused(planOf(h, kDeviceAndNetdev),
                  "cfg.yaml:6:11: rdma netdev 'eth0' does not exist (looked at "
                  "/sys/class/net/eth0 (under --root ");
  }
}

TEST(HostChecks, ExportPathLinksResolveInsideTheRoot) {
  for (const std::string target : {"scratch", "/srv/nfsrdma/scratch", "../nfsrdma/scratch"}) {
    SCOPED_TRACE(target);
    StagedHost h;
    replaceWithLink(h, "srv/nfsrdma/data", "", target);
    const auto r = planOf(h, oneClient("10.0.0.0/24"));
    EXPECT_EQ(r.status, 0) << r.err;
  }
}

TEST(HostChecks, ExportPathLinkLeavingTheRootIsRefused) {
  StagedHost h;
  const OutsideDir out(h);
  for (const std::string& target :
       {(out.dir / "data").string(), "../../../" + out.dir.filename().string() + "/data"}) {
    SCOPED_TRACE(target);
    replaceWithLink(h, "srv/nfsrdma/data", "", target);
    expectRefused(planOf(h, oneClient("10.0.0.0/24")),
                  "cfg.yaml:2:5: export path '/srv/nfsrdma/data' does not exist (looked at "
                  "/srv/nfsrdma/data (under --root " +
                      h.root.string() +
                      "), where symlinks resolve with the root as '/', never above it)");
  }
}

TEST(HostChecks, ExportPathMustBeADirectoryAtTheEndOfItsLinks) {
  StagedHost h;
  h.write("srv/nfsrdma/file", "x");
  replaceWithLink(h, "srv/nfsrdma/data", "", "file");
  expectRefused(planOf(h, oneClient("10.0.0.0/24")),
                "cfg.yaml:2:5: export path '/srv/nfsrdma/data' is not a directory");
  // A loop is what the confined resolution refuses: the error names the export.
  replaceWithLink(h, "srv/nfsrdma/data", "", "data");
  expectRefused(planOf(h, oneClient("10.0.0.0/24")),
                "cfg.yaml:2:5: export path '/srv/nfsrdma/data': cannot open "
                "/srv/nfsrdma/data (under --root ");
}

TEST(HostChecks, TheRootItselfIsAnExportableDirectory) {
  StagedHost h;
  const auto r = planOf(h, "exports:\n  - path: /\n    clients: [{host: 10.0.0.0/24}]\n");
  EXPECT_EQ(r.status, 0) << r.err;
}

// On the live host ("/") the same probes see ordinary directories and files;
// only reads, nothing on the host changes.
TEST(HostChecks, LiveHostSeesOrdinaryDirectoriesAndFiles) {
  using nfsrdma::server::HostPaths;
  using nfsrdma::server::validateOnHost;
  const auto errorOn = [](const std::string& path) -> std::string {
    const auto cfg = parseServerConfig(
        "exports:\n  - path: " + path + "\n    clients: [{host: 10.0.0.0/24}]\n", "cfg.yaml");
    try {
      validateOnHost(cfg, HostPaths("/"), false);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "(no error)";
  };
  StagedHost h;  // a directory and a file of the live host's /tmp
  h.write("file", "x");
  EXPECT_EQ(errorOn(h.root.string()), "(no error)");
  EXPECT_EQ(errorOn("/"), "(no error)");
  EXPECT_EQ(errorOn((h.root / "file").string()),
            "cfg.yaml:2:5: export path '" + (h.root / "file").string() +
                "' is not a directory (exportfs exports directories)");
  EXPECT_EQ(errorOn((h.root / "nope").string()),
            "cfg.yaml:2:5: export path '" + (h.root / "nope").string() +
                "' does not exist (looked at " + (h.root / "nope").string() + ")");
}
