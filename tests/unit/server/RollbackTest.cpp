// rollback against a staged --root tree: what it undoes, in which order, and
// what it leaves alone. ServerPlanTest covers the plain apply / rollback
// round trip; these are the cases around it (nfsdctl, a retried apply,
// nfs.conf edited after the apply).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "server/CommandRunner.h"
#include "server/HostState.h"
#include "server/NfsConf.h"
#include "server/PlanExecutor.h"
#include "server/ServerConfig.h"
#include "server/ServerPlan.h"
#include "tests/unit/server/StagedHost.h"
#include "tests/unit/server/ToolRunner.h"

using nfsrdma::server::testing::pos;
using nfsrdma::server::testing::replaced;
using nfsrdma::server::testing::runTool;
using nfsrdma::server::testing::StagedHost;
using nfsrdma::server::testing::ToolRun;

namespace {

const char* const kConfig = nfsrdma::server::testing::kSampleServerConfig;

class Rollback : public ::testing::Test {
 protected:
  void SetUp() override {
    host.write("cfg/server.yaml", kConfig);
    cfg = (host.root / "cfg/server.yaml").string();
    pristine = host.snapshot();
  }
  ToolRun tool(std::initializer_list<std::string> args) const {
    std::vector<std::string> argv = {"--root", host.root.string()};
    argv.insert(argv.end(), args);
    return runTool(argv);
  }
  ToolRun apply() const { return tool({"apply", cfg}); }
  ToolRun rollback() const { return tool({"rollback"}); }
  void installNfsdctl() const {
    host.write("usr/sbin/nfsdctl", "#!/bin/sh\nexit 0\n");
    ::chmod((host.root / "usr/sbin/nfsdctl").c_str(), 0755);
  }
  // Runs apply in a child process that dies (as on a kill or a power loss)
  // when it runs `dieAt`: the undo record is left as that apply left it.
  // Returns the child's exit status.
  int applyDyingAt(const std::string& dieAt) const;
  // What an admin does to nfs.conf after apply: one of our keys changed, a
  // commented default switched on, a section added.
  void editNfsConfLikeAnAdmin() const {
    std::string conf = host.read("etc/nfs.conf");
    conf = replaced(conf, "threads=16\n", "threads=32\n");
    conf = replaced(conf, "# manage-gids=n\n", "manage-gids=y\n");
    host.write("etc/nfs.conf", conf + "\n[statd]\nport=662\n");
  }
  // Each file has the bytes it had before the first apply.
  void expectPristine(std::initializer_list<const char*> files) const {
    for (const char* f : files) EXPECT_EQ(host.readAsReported(f), pristine.at(f)) << f;
  }

  StagedHost host;
  std::string cfg;
  std::map<std::string, std::string> pristine;
};

// Runs commands as the staged host does, but the process exits at once
// (no rollback of its own, no destructor) at the command named.
class DyingRunner final : public nfsrdma::server::CommandRunner {
 public:
  static constexpr int kDied = 42;
  DyingRunner(const nfsrdma::server::HostPaths& paths, std::string dieAt)
      : staged_(paths), dieAt_(std::move(dieAt)) {}
  nfsrdma::server::CommandResult run(const std::vector<std::string>& argv) override {
    if (nfsrdma::server::shellJoin(argv) == dieAt_) ::_exit(kDied);
    return staged_.run(argv);
  }

 private:
  nfsrdma::server::StagedCommandRunner staged_;
  std::string dieAt_;
};

int Rollback::applyDyingAt(const std::string& dieAt) const {
  const pid_t child = ::fork();
  if (child == 0) {
    const nfsrdma::server::HostPaths paths(host.root);
    DyingRunner runner(paths, dieAt);
    std::ostringstream out;
    try {
      nfsrdma::server::applyConfig(nfsrdma::server::loadServerConfig(cfg), paths, runner, false,
                                   out);
    } catch (...) {
    }
    ::_exit(0);
  }
  int status = 0;
  if (child < 0 || ::waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

}  // namespace

// With nfsdctl, apply opens a TCP and an RDMA listener and starts threads.
// Rollback stops nfsd first (the kernel refuses versions and listener changes
// while threads run), then closes each listener on its own transport, then
// puts lease time and versions back.
TEST_F(Rollback, NfsdctlStopsThreadsFirstAndClosesEachListenerOnItsTransport) {
  installNfsdctl();
  auto a = apply();
  ASSERT_EQ(a.status, 0) << a.err << a.out;
  pos(a.out, "done: [ports] /usr/sbin/nfsdctl listener +tcp::2049");
  pos(a.out, "done: [ports] /usr/sbin/nfsdctl listener +rdma::20049");
  pos(a.out, "done: [threads] /usr/sbin/nfsdctl threads 16");

  auto rb = rollback();
  ASSERT_EQ(rb.status, 0) << rb.out;
  const std::size_t threads = pos(rb.out, "ran: /usr/sbin/nfsdctl threads 0");
  const std::size_t tcp = pos(rb.out, "ran: /usr/sbin/nfsdctl listener -tcp::2049");
  const std::size_t rdma = pos(rb.out, "ran: /usr/sbin/nfsdctl listener -rdma::20049");
  const std::size_t lease = pos(rb.out, "/proc/fs/nfsd/nfsv4leasetime <- 90");
  const std::size_t versions = pos(rb.out, "/proc/fs/nfsd/versions <- -2 +3 +4 +4.0 +4.1 +4.2");
  EXPECT_LT(threads, tcp);
  EXPECT_LT(threads, rdma);
  EXPECT_LT(tcp, lease);
  EXPECT_LT(rdma, lease);
  EXPECT_LT(lease, versions);
  EXPECT_EQ(rb.out.find("-rdma::2049\n"), std::string::npos) << rb.out;
  expectPristine({"etc/nfs.conf", "proc/fs/nfsd/versions", "proc/fs/nfsd/nfsv4leasetime"});
}

// An apply that died half way (a failing one undoes itself; a killed one
// cannot), then a retry that finished: one rollback returns to the state
// before the first apply, not to the half-done state the retry started from.
TEST_F(Rollback, AfterAnInterruptedApplyAndARetryReturnsToTheStateBeforeTheFirst) {
  installNfsdctl();
  ASSERT_EQ(applyDyingAt("/usr/sbin/nfsdctl threads 16"), DyingRunner::kDied);
  ASSERT_NE(host.read("etc/nfs.conf"), pristine.at("etc/nfs.conf")) << "nfs.conf was written";
  ASSERT_TRUE(host.exists("var/lib/nfsrdma/last-apply.yaml"));
  auto retry = apply();
  ASSERT_EQ(retry.status, 0) << retry.err << retry.out;
  pos(retry.out, "is not rolled back: its undo record is extended");
  pos(retry.out, "`nfsrdma-server rollback` restores the state before the apply of ");

  auto rb = rollback();
  ASSERT_EQ(rb.status, 0) << rb.out;
  pos(rb.out, "and the later apply of ");
  expectPristine({"etc/nfs.conf", "proc/fs/nfsd/versions", "proc/fs/nfsd/nfsv4leasetime",
                  "proc/fs/nfsd/threads", "proc/sys/sunrpc/svc_rdma/max_requests"});
  EXPECT_FALSE(host.exists("etc/exports.d/nfsrdma.exports"));
  EXPECT_FALSE(host.exists("var/lib/nfsrdma/last-apply.yaml"));
}

// A record apply cannot read is not replaced (it may be all that can undo an
// earlier apply): apply stops, names the file, and changes nothing.
TEST_F(Rollback, ApplyRefusesToReplaceAnUnreadableRecord) {
  host.write("var/lib/nfsrdma/last-apply.yaml", "undo: [unclosed\n");
  const auto before = host.snapshot();
  auto a = apply();
  EXPECT_EQ(a.status, 1) << a.out;
  pos(a.err, "/var/lib/nfsrdma/last-apply.yaml (under --root " + host.root.string() +
                 "): line 2, column 1");
  pos(a.err, "unreadable apply record");
  EXPECT_EQ(host.snapshot(), before);
}

// Two runs at once would lose each other's undo steps: while one holds the
// state directory's lock, another apply or rollback is refused unchanged.
TEST_F(Rollback, ASecondRunIsRefusedWhileOneHoldsTheLock) {
  host.write("var/lib/nfsrdma/.keep", "");
  const auto before = host.snapshot();
  const int held =
      ::open((host.root / "var/lib/nfsrdma").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX | LOCK_NB), 0);
  for (const ToolRun& r : {apply(), rollback()}) {
    EXPECT_EQ(r.status, 1) << r.out;
    pos(r.err,
        "another nfsrdma-server apply or rollback is running: it holds a lock on "
        "/var/lib/nfsrdma (under --root " +
            host.root.string() + ")");
  }
  EXPECT_EQ(host.snapshot(), before);
  ::close(held);
  EXPECT_EQ(apply().status, 0);
}

// A file edited after the plan read it is not overwritten.
TEST_F(Rollback, AFileChangedSincePlanIsNotOverwritten) {
  const nfsrdma::server::HostPaths paths(host.root);
  const auto config = nfsrdma::server::loadServerConfig(cfg);
  const auto plan =
      nfsrdma::server::computePlan(config, paths, nfsrdma::server::HostState::probe(paths));
  const auto conf = std::find_if(plan.changes.begin(), plan.changes.end(), [](const auto& c) {
    return c.target == nfsrdma::server::HostPaths::kNfsConf;
  });
  ASSERT_NE(conf, plan.changes.end());
  EXPECT_NO_THROW(nfsrdma::server::requireUnchangedSincePlan(*conf, paths));
  host.write("etc/nfs.conf", host.read("etc/nfs.conf") + "[mountd]\nmanage-gids=y\n");
  try {
    nfsrdma::server::requireUnchangedSincePlan(*conf, paths);
    ADD_FAILURE() << "an edit made after the plan was not noticed";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "/etc/nfs.conf (under --root " + host.root.string() +
                  ") changed after the plan read it (something else wrote it), so it was not "
                  "written; run apply again to plan from its new content");
  }
}

// rpc.nfsd reads rdma=n as a port name (and logs that it cannot): with RDMA
// off, apply removes rdma and rdma-port instead, and rollback puts them back,
// also when the file was edited since.
TEST_F(Rollback, RdmaOffRemovesTheRdmaKeysAndRollbackRestoresThem) {
  host.write("etc/nfs.conf", "[nfsd]\nthreads=8\nrdma=y\nrdma-port=20049\n");
  host.write("cfg/tcp.yaml", std::string(kConfig) + "transports:\n  rdma: {enabled: false}\n");
  const auto a = tool({"apply", (host.root / "cfg/tcp.yaml").string()});
  ASSERT_EQ(a.status, 0) << a.out << a.err;
  const nfsrdma::server::NfsConf applied(host.read("etc/nfs.conf"));
  EXPECT_FALSE(applied.get("nfsd", "rdma"));
  EXPECT_FALSE(applied.get("nfsd", "rdma-port"));
  EXPECT_EQ(applied.get("nfsd", "tcp"), "y");
  host.write("etc/nfs.conf", host.read("etc/nfs.conf") + "[mountd]\nmanage-gids=y\n");
  const auto r = rollback();
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  pos(r.out, "set [nfsd] rdma = y (as before apply)");
  const nfsrdma::server::NfsConf restored(host.read("etc/nfs.conf"));
  EXPECT_EQ(restored.get("nfsd", "rdma"), "y");
  EXPECT_EQ(restored.get("nfsd", "rdma-port"), "20049");
  EXPECT_EQ(restored.get("mountd", "manage-gids"), "y");  // the later edit stays
}

// Edits made to nfs.conf after apply survive rollback: only the keys apply
// set are undone, a key changed since is kept and reported, and the whole
// pre-apply file stays in its backup.
TEST_F(Rollback, KeepsNfsConfEditsMadeAfterApply) {
  auto a = apply();
  ASSERT_EQ(a.status, 0) << a.err << a.out;
  editNfsConfLikeAnAdmin();

  const auto beforeDryRun = host.snapshot();
  auto dry = tool({"--dry-run", "rollback"});
  ASSERT_EQ(dry.status, 0) << dry.out;
  pos(dry.out, "would remove [nfsd] vers3 (absent before apply)");
  EXPECT_EQ(host.snapshot(), beforeDryRun) << "rollback --dry-run must not write";

  auto rb = rollback();
  ASSERT_EQ(rb.status, 0) << rb.out;
  pos(rb.out,
      "/etc/nfs.conf was edited after apply: undo only apply's keys; the whole file "
      "from before apply stays in /var/lib/nfsrdma/backups/nfs.conf.");
  pos(rb.out, "set [nfsd] lease-time = 90 (as before apply)");
  pos(rb.out, "kept [nfsd] threads = 32: changed since apply wrote 16 (before apply: absent)");
  std::string want = pristine.at("etc/nfs.conf");
  want = replaced(want, "# rdma-port=20049\n", "# rdma-port=20049\nthreads=32\n");
  want = replaced(want, "# manage-gids=n\n", "manage-gids=y\n");
  EXPECT_EQ(host.read("etc/nfs.conf"), want + "\n[statd]\nport=662\n");
  bool backupKept = false;
  for (const auto& [path, content] : host.snapshot()) {
    if (path.rfind("var/lib/nfsrdma/backups/nfs.conf.", 0) == 0)
      backupKept = backupKept || content == pristine.at("etc/nfs.conf");
  }
  EXPECT_TRUE(backupKept) << "the pre-apply nfs.conf must stay in the backups";
}

// An nfs.conf apply created goes away with rollback while nobody touched it;
// once the admin added settings, it stays with only apply's keys removed.
TEST_F(Rollback, AnNfsConfApplyCreatedStaysOnceItHoldsOtherSettings) {
  std::filesystem::remove(host.root / "etc/nfs.conf");
  ASSERT_EQ(apply().status, 0);
  auto untouched = rollback();
  ASSERT_EQ(untouched.status, 0) << untouched.out;
  EXPECT_FALSE(host.exists("etc/nfs.conf")) << untouched.out;

  ASSERT_EQ(apply().status, 0);
  host.write("etc/nfs.conf", host.read("etc/nfs.conf") + "\n[statd]\nport=662\n");
  auto edited = rollback();
  ASSERT_EQ(edited.status, 0) << edited.out;
  pos(edited.out, "(apply created the file; it stays, with the other settings)");
  EXPECT_EQ(host.read("etc/nfs.conf"), "[nfsd]\n\n[statd]\nport=662\n");
}

// A step rollback cannot undo stays recorded: once its cause is fixed, a
// second rollback finishes the job instead of finding nothing to roll back.
TEST_F(Rollback, AStepThatFailedStaysRecordedForTheNextRollback) {
  ASSERT_EQ(apply().status, 0);
  const std::string versionsApplied = host.read("proc/fs/nfsd/versions");
  ASSERT_NE(versionsApplied, pristine.at("proc/fs/nfsd/versions"));
  // The versions file cannot be written (a directory where procfs has a file).
  std::filesystem::remove(host.root / "proc/fs/nfsd/versions");
  host.mkdir("proc/fs/nfsd/versions");
  auto first = rollback();
  EXPECT_EQ(first.status, 1) << first.out;
  pos(first.out, "FAILED to undo kernel /proc/fs/nfsd/versions");
  pos(first.out, "the 1 step(s) that failed stay recorded in ");
  expectPristine({"etc/nfs.conf"});  // the other steps were undone
  ASSERT_TRUE(host.exists("var/lib/nfsrdma/last-apply.yaml")) << first.out;

  std::filesystem::remove(host.root / "proc/fs/nfsd/versions");
  host.write("proc/fs/nfsd/versions", versionsApplied);
  auto second = rollback();
  EXPECT_EQ(second.status, 0) << second.out;
  pos(second.out, "Rollback complete.");
  expectPristine({"proc/fs/nfsd/versions"});
  auto third = rollback();
  pos(third.out, "Nothing to roll back");
}

// Rollback retires the undo record under a name with the second it ran in.
// A record retired earlier in that second (an apply and rollback just
// before) keeps its name and bytes; the new one takes the next free name.
TEST_F(Rollback, ARetiredRecordNeverReplacesAnEarlierOne) {
  ASSERT_EQ(apply().status, 0);
  // Every name this rollback could pick, for the next minute, is taken.
  std::vector<std::string> taken;
  const std::time_t now = std::time(nullptr);
  for (std::time_t t = now - 1; t <= now + 60; ++t) {
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char ts[32];
    std::strftime(ts, sizeof ts, "%Y%m%dT%H%M%SZ", &tm);
    taken.push_back(std::string("var/lib/nfsrdma/last-apply.yaml.rolled-back.") + ts);
    host.write(taken.back(), "earlier record " + std::string(ts) + "\n");
  }
  const std::string record = host.read("var/lib/nfsrdma/last-apply.yaml");
  auto rb = rollback();
  ASSERT_EQ(rb.status, 0) << rb.out;
  for (const std::string& f : taken) {
    EXPECT_EQ(host.read(f), "earlier record " + f.substr(f.rfind('.') + 1) + "\n") << f;
  }
  std::size_t retired = 0;
  for (const auto& e : std::filesystem::directory_iterator(host.root / "var/lib/nfsrdma")) {
    const std::string name = e.path().filename().string();
    if (name.find("last-apply.yaml.rolled-back.") == 0 && name.size() > 45 &&
        name.compare(name.size() - 2, 2, ".1") == 0) {
      ++retired;
      EXPECT_EQ(host.read("var/lib/nfsrdma/" + name), record) << name;
    }
  }
  EXPECT_EQ(retired, 1u);
  EXPECT_FALSE(host.exists("var/lib/nfsrdma/last-apply.yaml"));
}

// Rollback writes and runs what the record names, so a hand-edited record
// naming anything apply never writes or runs is refused before any step is
// undone: a kernel value that is /etc/passwd, a backup outside the backups
// directory, a command that is not `exportfs -ra`.
TEST_F(Rollback, RefusesARecordStepApplyNeverWrites) {
  host.write("etc/passwd", "root:x:0:0:root:/root:/bin/bash\n");
  const std::pair<std::string, std::string> cases[] = {
      {"  - kind: kernel\n    path: /etc/passwd\n    before: \"\"\n",
       "undo step 2 (kernel /etc/passwd): expected a path in /proc/fs/nfsd or "
       "/proc/sys/sunrpc/svc_rdma"},
      {"  - kind: file\n    path: /etc/nfs.conf\n    existed: true\n    backup: /etc/passwd\n",
       "undo step 2 (file /etc/nfs.conf): expected a backup in /var/lib/nfsrdma/backups"},
      {"  - kind: command\n    argv: [/bin/sh, -c, \"echo > /etc/passwd\"]\n",
       "undo step 2 (command): expected argv [<sbin or bin>/exportfs, -ra]"},
  };
  for (const auto& [step, expected] : cases) {
    host.write("var/lib/nfsrdma/last-apply.yaml",
               "applied_at: 20261201T000000Z\nconfig: x\nundo:\n"
               "  - kind: file\n    path: /etc/exports.d/nfsrdma.exports\n    existed: false\n" +
                   step);
    const auto before = host.snapshot();
    const ToolRun r = rollback();
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    pos(r.err,
        "/var/lib/nfsrdma/last-apply.yaml (under --root " + host.root.string() + "): " + expected);
    EXPECT_EQ(host.snapshot(), before) << r.out;
  }
}

// A kill inside a file write (after apply recorded the step, before it
// renamed its copy over the file) leaves the file as it was before apply and
// the copy beside it. Rollback says there is nothing to undo in that file
// (it was not "edited after apply": apply never changed it), removes the
// copies apply and rollback make by their exact names, says which, and
// leaves every other name alone.
TEST_F(Rollback, AKillInsideAWriteLeavesNothingBehindAfterRollback) {
  installNfsdctl();
  ASSERT_EQ(applyDyingAt("/usr/sbin/nfsdctl threads 16"), DyingRunner::kDied);
  host.write("etc/nfs.conf", pristine.at("etc/nfs.conf"));  // the rename never happened
  const std::vector<std::string> copies = {
      "etc/.nfs.conf.nfsrdma-0123456789abcdef",
      "etc/exports.d/.nfsrdma.exports.nfsrdma-fedcba9876543210",
      "var/lib/nfsrdma/.last-apply.yaml.nfsrdma-00000000000000ff",
      "var/lib/nfsrdma/backups/.nfs.conf.20261201T000000Z.1.nfsrdma-0a0b0c0d0e0f1011"};
  const std::vector<std::string> others = {
      "etc/.nfs.conf.nfsrdma-0123456789ABCDEF",                // not lowercase hex
      "etc/.nfs.conf.nfsrdma-0123456789abcde",                 // 15 digits
      "etc/nfs.conf.nfsrdma-0123456789abcdef",                 // no leading dot
      "etc/.exports.nfsrdma-0123456789abcdef",                 // a file apply never writes
      "etc/exports.d/.site.exports.nfsrdma-0123456789abcdef",  // the admin's, beside ours
      "var/lib/nfsrdma/backups/.notes.nfsrdma-0123456789abcdef"};
  for (const auto& f : copies) host.write(f, "half a file");
  for (const auto& f : others) host.write(f, "keep");
  host.mkdir("etc/exports.d/.nfsrdma.exports.nfsrdma-1111111111111111");
  std::filesystem::create_symlink("/etc/passwd",
                                  host.root / "etc/.nfs.conf.nfsrdma-2222222222222222");

  const auto beforeDryRun = host.snapshot();
  const ToolRun dry = tool({"--dry-run", "rollback"});
  ASSERT_EQ(dry.status, 0) << dry.out;
  for (const auto& f : copies) pos(dry.out, "would remove /" + f + " (the copy a killed apply");
  EXPECT_EQ(host.snapshot(), beforeDryRun);

  const ToolRun rb = rollback();
  ASSERT_EQ(rb.status, 0) << rb.out;
  pos(rb.out, "/etc/nfs.conf holds what it held before apply: nothing to undo");
  EXPECT_EQ(rb.out.find("edited after apply"), std::string::npos) << rb.out;
  EXPECT_EQ(rb.out.find("kept [nfsd]"), std::string::npos) << rb.out;
  for (const auto& f : copies) {
    pos(rb.out, "removed /" + f + " (the copy a killed apply or rollback was writing)\n");
    EXPECT_FALSE(host.exists(f)) << f;
  }
  pos(rb.out, "Rollback complete.");
  for (const auto& f : others) EXPECT_EQ(host.read(f), "keep") << f;
  EXPECT_TRUE(std::filesystem::is_directory(
      host.root / "etc/exports.d/.nfsrdma.exports.nfsrdma-1111111111111111"));
  EXPECT_TRUE(std::filesystem::is_symlink(host.root / "etc/.nfs.conf.nfsrdma-2222222222222222"));
  expectPristine({"etc/nfs.conf", "proc/fs/nfsd/versions", "proc/fs/nfsd/nfsv4leasetime"});
  for (const auto& [path, content] : host.snapshot()) {
    EXPECT_EQ(path.find("nfs.conf.") != std::string::npos &&
                  path.find(".before-rollback") != std::string::npos,
              false)
        << "nfs.conf was not changed, so it is not saved as found: " << path;
  }

  // With no record left, a copy is still removed (and said).
  host.write(copies[0], "half a file");
  const ToolRun again = rollback();
  ASSERT_EQ(again.status, 0) << again.out;
  pos(again.out, "Nothing to roll back");
  pos(again.out, "removed /" + copies[0]);
  EXPECT_FALSE(host.exists(copies[0]));
}

// Apply records only steps rollback accepts: a kernel value rollback would
// refuse to write back (here a lease time outside the kernel's own 10..3600)
// stops apply before that value changes, and apply undoes what it did.
TEST_F(Rollback, ApplyRecordsOnlyWhatRollbackAccepts) {
  host.write("proc/fs/nfsd/nfsv4leasetime", "5\n");
  const ToolRun a = apply();
  EXPECT_EQ(a.status, 1) << a.out;
  pos(a.err,
      "apply stopped at [lease/grace /proc/fs/nfsd/nfsv4leasetime]: its undo step (kernel "
      "/proc/fs/nfsd/nfsv4leasetime) would not be one rollback accepts: expected before: a number "
      "of seconds 10..3600 on one line, as the kernel reports it (got '5\\x0a'); the ");
  pos(a.err, "change(s) it made were undone");
  EXPECT_EQ(host.read("proc/fs/nfsd/nfsv4leasetime"), "5\n");
  expectPristine({"etc/nfs.conf", "proc/fs/nfsd/versions"});
  EXPECT_FALSE(host.exists("var/lib/nfsrdma/last-apply.yaml"));
}

// Rollback tells apply's own writes from an admin's edit by the record's
// digests of what each apply replaced and wrote, not by setting apply's keys
// again: a second apply that adds back keys the first removed (RDMA off,
// then on) moves them, and nobody edited the file, so it goes back whole.
// An edit between the two applies is an edit: only apply's keys are undone.
TEST_F(Rollback, TwoAppliesThatMoveAKeyAreNotAnEditButAnEditBetweenThemIs) {
  host.write("etc/nfs.conf", "[nfsd]\nthreads=8\nrdma=y\nrdma-port=20049\n# end of [nfsd]\n");
  const std::string original = host.read("etc/nfs.conf");
  host.write("cfg/tcp.yaml", std::string(kConfig) + "transports:\n  rdma: {enabled: false}\n");
  const std::string tcp = (host.root / "cfg/tcp.yaml").string();
  ASSERT_EQ(tool({"apply", tcp}).status, 0);
  ASSERT_EQ(apply().status, 0);
  ASSERT_NE(host.read("etc/nfs.conf").find("# end of [nfsd]\nvers3=n"), std::string::npos)
      << "the second apply added rdma=y back at the end: " << host.read("etc/nfs.conf");
  const ToolRun rb = rollback();
  ASSERT_EQ(rb.status, 0) << rb.out;
  EXPECT_EQ(rb.out.find("edited after apply"), std::string::npos) << rb.out;
  pos(rb.out, "restored /etc/nfs.conf from /var/lib/nfsrdma/backups/nfs.conf.");
  EXPECT_EQ(host.read("etc/nfs.conf"), original);

  ASSERT_EQ(tool({"apply", tcp}).status, 0);
  host.write("etc/nfs.conf", host.read("etc/nfs.conf") + "[mountd]\nmanage-gids=y\n");
  ASSERT_EQ(apply().status, 0);
  const ToolRun edited = rollback();
  ASSERT_EQ(edited.status, 0) << edited.out;
  pos(edited.out, "/etc/nfs.conf was edited after apply: undo only apply's keys");
  EXPECT_NE(host.read("etc/nfs.conf").find("[mountd]\nmanage-gids=y\n"), std::string::npos);
}
