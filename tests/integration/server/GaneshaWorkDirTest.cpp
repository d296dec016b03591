// GaneshaWorkDir on the real file system: a given work directory is made or
// must be empty and ours alone; its files are made without following a link;
// the sweep removes the temporary directory of a run that ended (made here
// by a child process that exits, as a killed run leaves it) and keeps
// everything that is not certainly that. No ganesha is started.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "server/ganesha/GaneshaWorkDir.h"
#include "tests/integration/server/ServerTestSupport.h"

namespace fs = std::filesystem;
using nfsrdma::server::makeTemporaryGaneshaWorkDir;
using nfsrdma::server::makeWorkFile;
using nfsrdma::server::makeWorkSubdir;
using nfsrdma::server::sweepEndedGaneshaWorkDirs;
using nfsrdma::server::useGivenGaneshaWorkDir;
using nfsrdma::server::writeWorkFile;
using nfsrdma::testing::readFile;
using nfsrdma::testing::TempDir;

namespace {

// A temporary work directory made by a child process that has exited since:
// what a killed run leaves. *pid: the child's.
fs::path leftoverOfAnEndedRun(const fs::path& parent, pid_t* pid) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe");
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(fds[0]);
    try {
      const std::string made = makeTemporaryGaneshaWorkDir(parent).path.string();
      (void)!::write(fds[1], made.data(), made.size());
    } catch (...) {
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string made;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
    made.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  ::waitpid(child, nullptr, 0);
  if (made.empty())
    throw std::runtime_error("the child made no work directory in " + parent.string());
  *pid = child;
  return made;
}

// The record's line that starts with `key`, replaced by `line`.
void rewriteRecordLine(const fs::path& dir, const std::string& key, const std::string& line) {
  std::istringstream in(readFile(dir / "nfsrdma-run"));
  std::string out;
  for (std::string l; std::getline(in, l);) out += (l.rfind(key, 0) == 0 ? line : l) + "\n";
  std::ofstream(dir / "nfsrdma-run", std::ios::trunc) << out;
}

std::string sweepLine(const fs::path& path, pid_t pid) {
  return "note: removed the nfs-ganesha work directory left by a run that ended without removing "
         "it: " +
         path.string() + " (pid " + std::to_string(pid) + ")";
}

}  // namespace

TEST(GaneshaWorkDir, SweepRemovesTheDirectoryOfARunThatEnded) {
  TempDir parent;
  pid_t pid = 0;
  const fs::path left = leftoverOfAnEndedRun(parent.path, &pid);
  ASSERT_TRUE(fs::is_directory(left));
  EXPECT_EQ(left.filename().string().rfind("nfsrdma-ganesha-" + std::to_string(pid) + "-", 0), 0U)
      << left;
  std::ofstream(left / "ganesha.log") << "what ganesha wrote\n";
  fs::create_directories(left / "recovery/v4recov");
  std::ofstream(left / "ganesha.pid") << pid << "\n";  // its ganesha ended too
  EXPECT_EQ(sweepEndedGaneshaWorkDirs(parent.path), sweepLine(left, pid));
  EXPECT_FALSE(fs::exists(left));
  EXPECT_EQ(sweepEndedGaneshaWorkDirs(parent.path), "");
}

// Each of these is kept: a live pid (ours, or pid 1 as an unrelated process
// that reuses a pid), no record, a record of another boot, a record that is
// a link, a ganesha that still runs, a name not exactly ours, a link or file
// named like ours, a directory of another user.
TEST(GaneshaWorkDir, SweepKeepsWhatIsNotCertainlyAnEndedRunsDirectory) {
  TempDir parent, elsewhere;
  std::vector<fs::path> kept;
  kept.push_back(makeTemporaryGaneshaWorkDir(parent.path).path);  // this process runs
  pid_t pid = 0;
  const auto leftover = [&] { return leftoverOfAnEndedRun(parent.path, &pid); };

  fs::path p = leftover();
  const fs::path reused =
      parent.path /
      ("nfsrdma-ganesha-1-" + p.filename().string().substr(p.filename().string().size() - 6));
  fs::rename(p, reused);
  rewriteRecordLine(reused, "pid ", "pid 1");
  kept.push_back(reused);

  p = leftover();
  fs::remove(p / "nfsrdma-run");
  kept.push_back(p);

  p = leftover();
  rewriteRecordLine(p, "boot ", "boot 00000000-0000-0000-0000-000000000000");
  kept.push_back(p);

  p = leftover();
  fs::rename(p / "nfsrdma-run", elsewhere.path / "record");
  fs::create_symlink(elsewhere.path / "record", p / "nfsrdma-run");
  kept.push_back(p);

  p = leftover();
  std::ofstream(p / "ganesha.pid") << ::getpid() << "\n";
  kept.push_back(p);

  for (const char* suffix : {"-abc12", "-abc1234", "-ab-123", "-abc123.old"}) {
    p = leftover();
    const fs::path renamed = parent.path / ("nfsrdma-ganesha-" + std::to_string(pid) + suffix);
    fs::rename(p, renamed);
    kept.push_back(renamed);
  }
  p = leftover();
  fs::rename(p, parent.path / ("nfsrdma-ganesha-0" + std::to_string(pid) + "-abc123"));
  kept.push_back(parent.path / ("nfsrdma-ganesha-0" + std::to_string(pid) + "-abc123"));

  const fs::path target = leftoverOfAnEndedRun(elsewhere.path, &pid);
  fs::create_symlink(target, parent.path / target.filename());
  kept.push_back(parent.path / target.filename());
  std::ofstream(parent.path / ("nfsrdma-ganesha-" + std::to_string(pid) + "-file12")) << "a file\n";
  kept.push_back(parent.path / ("nfsrdma-ganesha-" + std::to_string(pid) + "-file12"));

  if (::geteuid() == 0) {
    p = leftover();
    ASSERT_EQ(::chown(p.c_str(), 65534, 65534), 0);
    kept.push_back(p);
  }

  EXPECT_EQ(sweepEndedGaneshaWorkDirs(parent.path), "");
  for (const fs::path& k : kept) EXPECT_TRUE(fs::exists(fs::symlink_status(k))) << k;
  EXPECT_TRUE(fs::is_directory(target)) << "the link's target";
}

TEST(GaneshaWorkDir, AGivenDirectoryIsMadeOrMustBeEmptyAndOurs) {
  TempDir dir;
  const auto made = useGivenGaneshaWorkDir(dir.path / "a/b/work/");
  EXPECT_EQ(made.path, dir.path / "a/b/work");
  EXPECT_FALSE(made.temporary);
  struct stat st {};
  ASSERT_EQ(::stat(made.path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700U);
  EXPECT_EQ(useGivenGaneshaWorkDir(dir.path / "a/b/work").path,
            dir.path / "a/b/work");  // empty, ours

  const auto refusal = [](const fs::path& p) {
    try {
      (void)useGivenGaneshaWorkDir(p);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string cannot =
      "cannot use '" + (dir.path / "a").string() + "' as nfs-ganesha's work directory: ";
  const std::string give =
      "; give a new directory (it is made), an empty one or one an earlier run of ours used: "
      "ganesha.conf, "
      "ganesha.log, ganesha.pid, ganesha.stdout, recovery/ and nfsrdma-run are written there";
  EXPECT_EQ(refusal(dir.path / "a"),
            cannot +
                "it is not empty (holds b) and no run of ours used it (no nfsrdma-run "
                "in it)" +
                give);
  fs::create_directories(dir.path / "group");
  ::chmod((dir.path / "group").c_str(), 0770);
  EXPECT_EQ(refusal(dir.path / "group"),
            "cannot use '" + (dir.path / "group").string() +
                "' as nfs-ganesha's work directory: others may write in it (mode 0770), so they "
                "could put a link "
                "where ganesha writes; give a new directory (it is made) or one only we may write");
  std::ofstream(dir.path / "file") << "x";
  EXPECT_EQ(refusal(dir.path / "file"),
            "cannot use '" + (dir.path / "file").string() +
                "' as nfs-ganesha's work directory: Not a directory (expected a "
                "directory)");
  if (::geteuid() == 0) {
    fs::create_directories(dir.path / "theirs");
    ASSERT_EQ(::chown((dir.path / "theirs").c_str(), 65534, 65534), 0);
    EXPECT_EQ(refusal(dir.path / "theirs"),
              "cannot use '" + (dir.path / "theirs").string() +
                  "' as nfs-ganesha's work directory: it is owned by uid 65534, not "
                  "by us (uid 0)" +
                  give);
  }
}

// What an earlier run of ours left is used again (a server restarted in
// place keeps its recovery state); anything else in it, or that run or its
// ganesha still running, is refused.
TEST(GaneshaWorkDir, ADirectoryAnEndedRunLeftIsUsedAgain) {
  TempDir dir;
  const fs::path work = useGivenGaneshaWorkDir(dir.path / "work").path;
  for (const char* f : {"ganesha.conf", "ganesha.log", "ganesha.pid", "ganesha.stdout"})
    std::ofstream(work / f) << "";
  fs::create_directories(work / "recovery/v4recov");
  EXPECT_EQ(useGivenGaneshaWorkDir(work).path, work);

  const auto refusal = [&work] {
    try {
      (void)useGivenGaneshaWorkDir(work);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string cannot = "cannot use '" + work.string() + "' as nfs-ganesha's work directory: ";
  std::ofstream(work / "notes.txt") << "mine\n";
  EXPECT_EQ(
      refusal(),
      cannot +
          "it holds notes.txt, which no run of ours puts there; give a new directory (it is "
          "made), an empty one or one an earlier run of ours used: ganesha.conf, ganesha.log, "
          "ganesha.pid, ganesha.stdout, recovery/ and nfsrdma-run are written there");
  fs::remove(work / "notes.txt");

  std::ofstream(work / "ganesha.pid", std::ios::trunc) << ::getpid() << "\n";
  EXPECT_EQ(refusal(), cannot + "the nfs-ganesha in its ganesha.pid (" +
                           std::to_string(::getpid()) +
                           ") still runs; stop it first, or give another directory");
  std::ofstream(work / "ganesha.pid", std::ios::trunc) << "";

  // pid 1 runs: as another process that used the directory and still runs.
  const std::string record = readFile(work / "nfsrdma-run");
  std::ofstream(work / "nfsrdma-run", std::ios::trunc)
      << "pid 1" << record.substr(record.find('\n'));
  EXPECT_EQ(
      refusal(),
      cannot +
          "process 1, which ran nfs-ganesha there, still runs; stop it first, or give another "
          "directory");
  EXPECT_EQ(readFile(work / "ganesha.conf"), "");
}

// A link put where a file of the work directory goes (after the directory
// was checked) is replaced, never followed.
TEST(GaneshaWorkDir, FilesAreMadeWithoutFollowingALink) {
  TempDir dir;
  const auto work = useGivenGaneshaWorkDir(dir.path / "work");
  std::ofstream(dir.path / "victim") << "someone else's\n";
  fs::create_symlink(dir.path / "victim", work.path / "ganesha.log");
  fs::create_symlink(dir.path / "would-be-made", work.path / "ganesha.conf");
  fs::create_directories(dir.path / "elsewhere");
  fs::create_symlink(dir.path / "elsewhere", work.path / "recovery");

  (void)makeWorkFile(work, "ganesha.log");
  writeWorkFile(work, "ganesha.conf", "config\n");
  EXPECT_EQ(readFile(dir.path / "victim"), "someone else's\n");
  EXPECT_FALSE(fs::exists(dir.path / "would-be-made"));
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(work.path / "ganesha.log")));
  EXPECT_EQ(fs::file_size(work.path / "ganesha.log"), 0U);
  EXPECT_EQ(readFile(work.path / "ganesha.conf"), "config\n");
  try {
    makeWorkSubdir(work, "recovery");
    FAIL() << "a link to a directory was taken as the recovery directory";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot create directory " + (work.path / "recovery").string() + ": File exists");
  }
}
