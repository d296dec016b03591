// Path confinement and pre-flight checks of nfsrdma-server against a staged
// --root: a symlink at any managed path is refused, not followed, and a
// hostile host state fails before the first change, leaving every file
// inside and outside the root as it was. An apply that still fails half way
// undoes what it did.
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "server/CommandRunner.h"
#include "server/HostFiles.h"
#include "server/HostPaths.h"
#include "server/PlanExecutor.h"
#include "server/ServerConfig.h"
#include "tests/unit/server/StagedHost.h"
#include "tests/unit/server/ToolRunner.h"

using nfsrdma::server::testing::pos;
using nfsrdma::server::testing::replaced;
using nfsrdma::server::testing::runTool;
using nfsrdma::server::testing::StagedHost;
using nfsrdma::server::testing::ToolRun;
namespace fs = std::filesystem;

namespace {

const char* const kConfig = nfsrdma::server::testing::kSampleServerConfig;

class Confinement : public ::testing::Test {
 protected:
  void SetUp() override {
    host.write("cfg/server.yaml", kConfig);
    cfg = (host.root / "cfg/server.yaml").string();
    outside.write("sentinel/file", "bytes outside the root\n");
  }
  // `nfsrdma-server --root ROOT apply CFG` (or rollback).
  ToolRun run(const std::string& command) const {
    std::vector<std::string> argv = {"--root", host.root.string(), command};
    if (command == "apply") argv.push_back(cfg);
    return runTool(argv);
  }
  // Replaces ROOT/rel with an absolute symlink to a path outside the root
  // that holds what was there (a file, or a directory tree), or, when
  // nothing was, an empty directory or a file with `content`.
  void linkOutside(const std::string& rel, bool dir, const std::string& content = "outside\n") {
    const fs::path target = outside.root / "targets" / rel;
    fs::create_directories(target.parent_path());
    if (fs::exists(fs::symlink_status(host.root / rel))) {
      fs::copy(host.root / rel, target, fs::copy_options::recursive);
      fs::remove_all(host.root / rel);
    } else if (dir) {
      fs::create_directories(target);
    } else {
      outside.write("targets/" + rel, content);
    }
    fs::create_directories((host.root / rel).parent_path());
    fs::create_symlink(target, host.root / rel);
  }
  // The run failed naming `hostPath` (with the root) and what is wrong with
  // it, and not a byte changed inside or outside the root.
  void expectRefusedUnchanged(const ToolRun& r, const std::string& hostPath,
                              const std::string& what) const {
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    pos(r.err, hostPath + " (under --root " + host.root.string() + ") " + what);
    EXPECT_EQ(host.snapshot(), inside) << r.out << r.err;
    EXPECT_EQ(outside.snapshot(), beyond) << r.out << r.err;
  }
  void takeSnapshots() {
    inside = host.snapshot();
    beyond = outside.snapshot();
  }

  StagedHost host;
  StagedHost outside;  // stands for everything outside the root
  std::string cfg;
  std::map<std::string, std::string> inside, beyond;
};

struct LinkCase {
  const char* name;
  const char* rel;  // path under the root made a symlink to outside
  bool dir;
  const char* content;  // what the link's target holds when the host had nothing there
};

class SymlinkAtManagedPath : public Confinement, public ::testing::WithParamInterface<LinkCase> {};

// apply follows none of them: each is named, and nothing changes anywhere.
TEST_P(SymlinkAtManagedPath, ApplyRefusesAndChangesNothing) {
  const LinkCase& c = GetParam();
  linkOutside(c.rel, c.dir, c.content);
  takeSnapshots();
  expectRefusedUnchanged(run("apply"), "/" + std::string(c.rel), "is a symlink");
}

const LinkCase kLinkCases[] = {
    {"Threads", "proc/fs/nfsd/threads", false, ""},
    {"PortList", "proc/fs/nfsd/portlist", false, ""},
    {"SvcRdmaDir", "proc/sys/sunrpc/svc_rdma", true, ""},
    {"ExportsDir", "etc/exports.d", true, ""},
    {"OwnExports", "etc/exports.d/nfsrdma.exports", false, "/srv 10.0.0.0/8(rw)\n"},
    {"StateDir", "var/lib/nfsrdma", true, ""},
    {"BackupDir", "var/lib/nfsrdma/backups", true, ""},
    {"LastApply", "var/lib/nfsrdma/last-apply.yaml", false,
     "applied_at: 20261201T000000Z\nconfig: x\nundo: []\n"},
};

INSTANTIATE_TEST_SUITE_P(Server, SymlinkAtManagedPath, ::testing::ValuesIn(kLinkCases),
                         [](const auto& p) { return std::string(p.param.name); });

// Our exports file replaced by a link after apply: rollback neither writes
// the backup into the link's target nor undoes anything else half way.
TEST_F(Confinement, RollbackRefusesASymlinkedExportsFileAndChangesNothing) {
  host.write("etc/exports.d/nfsrdma.exports", "# ours, before apply\n");
  const ToolRun a = run("apply");
  ASSERT_EQ(a.status, 0) << a.out << a.err;
  linkOutside("etc/exports.d/nfsrdma.exports", false);
  takeSnapshots();
  expectRefusedUnchanged(run("rollback"), "/etc/exports.d/nfsrdma.exports", "is a symlink");
}

struct HostileCase {
  const char* name;
  const char* rel;  // made a file (dir = false) or a directory (dir = true)
  bool dir;
  const char* what;  // the error after the path
};

class HostileHostState : public Confinement, public ::testing::WithParamInterface<HostileCase> {};

// Found before the first change (no module, file or kernel value touched).
TEST_P(HostileHostState, ApplyFailsBeforeTheFirstChange) {
  const HostileCase& c = GetParam();
  fs::remove_all(host.root / c.rel);
  if (c.dir) {
    host.write(std::string(c.rel) + "/inside", "a file in the directory\n");
  } else {
    host.write(c.rel, "a regular file\n");
  }
  takeSnapshots();
  expectRefusedUnchanged(run("apply"), "/" + std::string(c.rel), c.what);
}

const HostileCase kHostileCases[] = {
    {"ExportsDirIsAFile", "etc/exports.d", false, "is a regular file; expected a directory"},
    {"NfsConfIsADirectory", "etc/nfs.conf", true, "is a directory; expected a regular file"},
    {"BackupDirIsAFile", "var/lib/nfsrdma/backups", false,
     "is a regular file; expected a directory"},
    {"StateDirIsAFile", "var/lib/nfsrdma", false, "is a regular file; expected a directory"},
    {"PortListIsADirectory", "proc/fs/nfsd/portlist", true,
     "is a directory; expected a regular file"},
};

INSTANTIATE_TEST_SUITE_P(Server, HostileHostState, ::testing::ValuesIn(kHostileCases),
                         [](const auto& p) { return std::string(p.param.name); });

// Runs commands like the staged host does, except the one named, which
// fails (after `onFail`, which can break something else too).
class FailingRunner final : public nfsrdma::server::CommandRunner {
 public:
  FailingRunner(
      const nfsrdma::server::HostPaths& paths, std::string failing,
      std::function<void()> onFail = [] {})
      : staged_(paths), failing_(std::move(failing)), onFail_(std::move(onFail)) {}
  nfsrdma::server::CommandResult run(const std::vector<std::string>& argv) override {
    if (nfsrdma::server::shellJoin(argv) != failing_) return staged_.run(argv);
    onFail_();
    return {1, "simulated failure"};
  }

 private:
  nfsrdma::server::StagedCommandRunner staged_;
  std::string failing_;
  std::function<void()> onFail_;
};

// What apply (of the config `cfg`, with `runner`) threw; "" and a test
// failure when it did not fail.
std::string applyError(const std::string& cfg, const nfsrdma::server::HostPaths& paths,
                       nfsrdma::server::CommandRunner& runner, std::ostringstream& out) {
  try {
    nfsrdma::server::applyConfig(nfsrdma::server::loadServerConfig(cfg), paths, runner, false, out);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "apply did not fail:\n" << out.str();
  return "";
}

// The last step (starting nfsd) fails after files, kernel values and
// listeners changed: apply undoes them itself and says so.
TEST_F(Confinement, AnApplyThatFailsHalfWayRollsItselfBack) {
  host.write("usr/sbin/nfsdctl", "#!/bin/sh\nexit 0\n");
  fs::permissions(host.root / "usr/sbin/nfsdctl", fs::perms(0755));
  takeSnapshots();
  const nfsrdma::server::HostPaths paths(host.root);
  FailingRunner runner(paths, "/usr/sbin/nfsdctl threads 16");
  std::ostringstream out;
  pos(applyError(cfg, paths, runner, out),
      "apply stopped at [threads /proc/fs/nfsd/threads]: `/usr/sbin/nfsdctl threads 16` failed "
      "(exit 1): simulated failure; the 9 change(s) it made were undone (modules stay loaded)");
  pos(out.str(), "done: [files] wrote /etc/nfs.conf");
  pos(out.str(), "done: [ports] /usr/sbin/nfsdctl listener +rdma::20049");
  pos(out.str(), "ran: /usr/sbin/nfsdctl listener -rdma::20049");
  // Every file is as before. New are only the backups and the retired
  // record, the modules apply loaded (they stay loaded, as with rollback)
  // and the empty directory apply made for our exports file.
  auto now = host.snapshot();
  for (auto it = now.begin(); it != now.end();) {
    const bool evidence = it->first.rfind("var/lib/nfsrdma", 0) == 0 ||
                          it->first.rfind("sys/module/", 0) == 0 || it->first == "etc/exports.d";
    it = evidence && !inside.count(it->first) ? now.erase(it) : std::next(it);
  }
  now["proc/fs/nfsd/versions"] = host.readAsReported("proc/fs/nfsd/versions");  // +4.0 implied
  EXPECT_EQ(now, inside) << out.str();
  EXPECT_FALSE(host.exists("var/lib/nfsrdma/last-apply.yaml")) << out.str();
  EXPECT_EQ(outside.snapshot(), beyond);
}

// A failing apply after one not rolled back undoes only itself: the host
// and the record are as the first apply left them, and one rollback still
// returns to the state before the first.
TEST_F(Confinement, AFailingSecondApplyUndoesOnlyItself) {
  host.write("usr/sbin/nfsdctl", "#!/bin/sh\nexit 0\n");
  fs::permissions(host.root / "usr/sbin/nfsdctl", fs::perms(0755));
  takeSnapshots();
  ASSERT_EQ(run("apply").status, 0);
  const auto afterFirst = host.snapshot();
  host.write("cfg/server.yaml", replaced(kConfig, "threads: 16", "threads: 32"));
  const nfsrdma::server::HostPaths paths(host.root);
  FailingRunner runner(paths, "/usr/sbin/nfsdctl threads 32");
  std::ostringstream out;
  EXPECT_THROW(nfsrdma::server::applyConfig(nfsrdma::server::loadServerConfig(cfg), paths, runner,
                                            false, out),
               std::runtime_error);
  pos(out.str(), "done: [files] wrote /etc/nfs.conf");
  for (const char* f :
       {"etc/nfs.conf", "var/lib/nfsrdma/last-apply.yaml", "proc/fs/nfsd/threads"}) {
    EXPECT_EQ(host.read(f), afterFirst.at(f)) << f << "\n" << out.str();
  }
  const ToolRun rb = run("rollback");
  ASSERT_EQ(rb.status, 0) << rb.out;
  EXPECT_EQ(host.read("etc/nfs.conf"), inside.at("etc/nfs.conf"));
}

// When the self-undo cannot put the record back (here: it vanished), the
// error still says what stopped apply, and what the undo could not do.
TEST_F(Confinement, AFailedSelfUndoKeepsTheErrorThatStoppedApply) {
  host.write("usr/sbin/nfsdctl", "#!/bin/sh\nexit 0\n");
  fs::permissions(host.root / "usr/sbin/nfsdctl", fs::perms(0755));
  const nfsrdma::server::HostPaths paths(host.root);
  FailingRunner runner(paths, "/usr/sbin/nfsdctl threads 16",
                       [this] { fs::remove(host.root / "var/lib/nfsrdma/last-apply.yaml"); });
  std::ostringstream out;
  const std::string what = applyError(cfg, paths, runner, out);
  pos(what,
      "apply stopped at [threads /proc/fs/nfsd/threads]: `/usr/sbin/nfsdctl threads 16` "
      "failed (exit 1): simulated failure; the 9 change(s) it made were undone");
  pos(what,
      "could not be put back as it was before this apply (cannot rename "
      "/var/lib/nfsrdma/last-apply.yaml");
}

// An apply on a read-only file system is refused before its first change:
// no module marked loaded, no backup, no record.
class ReadOnlyMount : public Confinement {
 protected:
  void TearDown() override {
    if (!mounted.empty()) ::umount2(mounted.c_str(), MNT_DETACH);
  }
  std::string mounted;
};

TEST_F(ReadOnlyMount, ApplyRefusesBeforeTheFirstChange) {
  host.mkdir("etc/exports.d");
  const std::string dir = (host.root / "etc/exports.d").string();
  if (::mount("tmpfs", dir.c_str(), "tmpfs", MS_RDONLY, "size=64k") != 0) {
    const int err = errno;
    if (err == EPERM) GTEST_SKIP() << "mount(2) is not permitted here: " << std::strerror(err);
    FAIL() << "mount tmpfs on " << dir << ": " << std::strerror(err);
  }
  mounted = dir;
  takeSnapshots();
  expectRefusedUnchanged(run("apply"), "/etc/exports.d",
                         "is on a read-only file system; expected a writable one");
}

// Makes this process's openat2 fail with EPERM, as a seccomp filter that
// predates it does (older Docker, systemd SystemCallFilter=). The filter
// checks no architecture: it only has to hold for this test's own process.
bool blockOpenat2() {
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0;
}

// What doctor under --root says, and whether the live host is still
// readable, in a child whose openat2 is blocked (the filter cannot be
// removed, so not in this process).
std::string doctorWithoutOpenat2(const std::string& root) {
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(fds[0]);
    std::string report = "no filter";
    if (blockOpenat2()) {
      const ToolRun r = runTool({"--root", root, "doctor"});
      report = "status " + std::to_string(r.status) + "\n" + r.err + r.out;
      try {
        const nfsrdma::server::HostPaths live("/");
        report += readHostFile(live, "/etc/hostname") ? "live host read\n" : "live host: absent\n";
      } catch (const std::exception& e) {
        report += std::string("live host: ") + e.what() + "\n";
      }
    }
    const ssize_t n = ::write(fds[1], report.data(), report.size());
    ::_exit(n == static_cast<ssize_t>(report.size()) ? 0 : 1);
  }
  ::close(fds[1]);
  std::string report;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
    report.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  ::waitpid(child, nullptr, 0);
  return report;
}

TEST_F(Confinement, BlockedOpenat2IsAnErrorNotAnEmptyHost) {
  const std::string report = doctorWithoutOpenat2(host.root.string());
  pos(report, "status 1\n");
  pos(report,
      "openat2 is unavailable (kernel older than 5.6, or blocked by a seccomp filter or "
      "container): cannot confine reads of /");
  pos(report, " to --root " + host.root.string());
  pos(report, "live host read\n");  // "/" needs no openat2
}

}  // namespace
