// GaneshaWorkDir on the real file system: a given work directory is made or
// must be empty (or what an ended run of ours left) and ours alone; its files
// are made without following a link. No ganesha is started.
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
using nfsrdma::server::makeWorkFile;
using nfsrdma::server::makeWorkSubdir;
using nfsrdma::server::useGivenGaneshaWorkDir;
using nfsrdma::server::writeWorkFile;
using nfsrdma::testing::readFile;
using nfsrdma::testing::TempDir;

namespace {

}  // namespace

TEST(GaneshaWorkDir, AGivenDirectoryIsMadeOrMustBeEmptyAndOurs) {
  TempDir dir;
  const auto made = useGivenGaneshaWorkDir(dir.path / "a/b/work/");
  EXPECT_EQ(made.path, dir.path / "a/b/work");
  EXPECT_FALSE(made.temporary);
  struct stat st {};
  ASSERT_EQ(::stat(made.path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700U);
  EXPECT_EQ(useGivenGaneshaWorkDir(dir.path / "a/b/work").path, dir.path / "a/b/work");  // empty, ours

  const auto refusal = [](const fs::path& p) {
    try {
      (void)useGivenGaneshaWorkDir(p);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string cannot = "cannot use '" + (dir.path / "a").string() + "' as nfs-ganesha's work directory: ";
  const std::string give =
      "; give a new directory (it is made), an empty one or one an earlier run of ours used: ganesha.conf, "
      "ganesha.log, ganesha.pid, ganesha.stdout, recovery/ and nfsrdma-run are written there";
  EXPECT_EQ(refusal(dir.path / "a"), cannot + "it is not empty (holds b) and no run of ours used it (no nfsrdma-run "
                                              "in it)" + give);
  fs::create_directories(dir.path / "group");
  ::chmod((dir.path / "group").c_str(), 0770);
  EXPECT_EQ(refusal(dir.path / "group"),
            "cannot use '" + (dir.path / "group").string() +
                "' as nfs-ganesha's work directory: others may write in it (mode 0770), so they could put a link "
                "where ganesha writes; give a new directory (it is made) or one only we may write");
  std::ofstream(dir.path / "file") << "x";
  EXPECT_EQ(refusal(dir.path / "file"), "cannot use '" + (dir.path / "file").string() +
                                            "' as nfs-ganesha's work directory: Not a directory (expected a "
                                            "directory)");
  if (::geteuid() == 0) {
    fs::create_directories(dir.path / "theirs");
    ASSERT_EQ(::chown((dir.path / "theirs").c_str(), 65534, 65534), 0);
    EXPECT_EQ(refusal(dir.path / "theirs"), "cannot use '" + (dir.path / "theirs").string() +
                                                "' as nfs-ganesha's work directory: it is owned by uid 65534, not "
                                                "by us (uid 0)" + give);
  }
}

// What an earlier run of ours left is used again (a server restarted in
// place keeps its recovery state); anything else in it, or that run or its
// ganesha still running, is refused.
TEST(GaneshaWorkDir, ADirectoryAnEndedRunLeftIsUsedAgain) {
  TempDir dir;
  const fs::path work = useGivenGaneshaWorkDir(dir.path / "work").path;
  for (const char* f : {"ganesha.conf", "ganesha.log", "ganesha.pid", "ganesha.stdout"}) std::ofstream(work / f) << "";
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
  EXPECT_EQ(refusal(), cannot + "it holds notes.txt, which no run of ours puts there; give a new directory (it is "
                                "made), an empty one or one an earlier run of ours used: ganesha.conf, ganesha.log, "
                                "ganesha.pid, ganesha.stdout, recovery/ and nfsrdma-run are written there");
  fs::remove(work / "notes.txt");

  std::ofstream(work / "ganesha.pid", std::ios::trunc) << ::getpid() << "\n";
  EXPECT_EQ(refusal(), cannot + "the nfs-ganesha in its ganesha.pid (" + std::to_string(::getpid()) +
                           ") still runs; stop it first, or give another directory");
  std::ofstream(work / "ganesha.pid", std::ios::trunc) << "";

  // pid 1 runs: as another process that used the directory and still runs.
  const std::string record = readFile(work / "nfsrdma-run");
  std::ofstream(work / "nfsrdma-run", std::ios::trunc) << "pid 1" << record.substr(record.find('\n'));
  EXPECT_EQ(refusal(), cannot + "process 1, which ran nfs-ganesha there, still runs; stop it first, or give another "
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
    EXPECT_EQ(std::string(e.what()), "cannot create directory " + (work.path / "recovery").string() + ": File exists");
  }
}
