// The directory a run makes for itself (bench/file/RunDirectory.h): after a
// SIGKILL the embedded server's export (/var/tmp/nfsrdma-bench-PID, tens of
// MiB) stayed for ever. The next run sweeps what dead runs left, and only
// that: the exact name, a directory of this user's, its PID gone, its lock
// free.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench/file/RunDirectory.h"
#include "tests/unit/bench/ScratchDir.h"

namespace nfsrdma::bench {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

// A PID that no process has now: a child's, reaped.
int deadPid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

// parent/name holding a file of the given size.
fs::path leftover(const fs::path& parent, const std::string& name, std::size_t bytes) {
  const fs::path dir = parent / name;
  fs::create_directories(dir);
  std::ofstream(dir / "nfsrdma-bench.s1.b1048576.j0.f0") << std::string(bytes, 'x');
  return dir;
}

TEST(RunDirectory, WhatADeadRunLeftIsRemovedAndSaid) {
  ScratchDir parent("sweep-dead");
  const int dead = deadPid();
  const fs::path left = leftover(parent.path(), "nfsrdma-bench-" + std::to_string(dead), 3 << 20);
  const SweptDirectories swept =
      sweepDeadRunDirectories(parent.path(), "nfsrdma-bench", ::getpid());
  EXPECT_FALSE(fs::exists(left));
  EXPECT_EQ(swept.removed, std::vector<std::string>{left.string()});
  EXPECT_EQ(swept.bytes, 3U << 20);
  EXPECT_TRUE(swept.failed.empty());
  EXPECT_EQ(sweptLine(swept), "removed " + left.string() +
                                  " (3 MiB), left by a run that was killed (its process is gone)");
  EXPECT_EQ(sweptLine({}), "");
}

TEST(RunDirectory, WhatIsNotCertainlyADeadRunsIsKept) {
  ScratchDir parent("sweep-keep");
  const std::string dead = std::to_string(deadPid());
  std::vector<fs::path> kept = {
      leftover(parent.path(), "nfsrdma-bench-" + std::to_string(::getppid()), 10),  // live
      leftover(parent.path(), "nfsrdma-bench-1", 10),                               // init: live
      leftover(parent.path(), "nfsrdma-bench-0" + dead, 10),
      leftover(parent.path(), "nfsrdma-bench-" + dead + "x", 10),
      leftover(parent.path(), "nfsrdma-benchx-" + dead, 10),
      leftover(parent.path(), "nfsrdma-bench-", 10),
      leftover(parent.path(), "nfsrdma-bench-99999999999999999999", 10),
  };
  // Another user's directory with a dead run's name.
  const fs::path other = leftover(parent.path(), "nfsrdma-bench-" + dead, 10);
  ASSERT_EQ(::chown(other.c_str(), 65534, 65534), 0);
  kept.push_back(other);
  // A symlink with a dead run's name, to a directory of ours.
  const fs::path target = leftover(parent.path(), "elsewhere", 10);
  const int dead2 = deadPid();
  fs::create_directory_symlink(target, parent.path() / ("nfsrdma-bench-" + std::to_string(dead2)));
  kept.push_back(parent.path() / ("nfsrdma-bench-" + std::to_string(dead2)));
  // A regular file with a dead run's name.
  const int dead3 = deadPid();
  std::ofstream(parent.path() / ("nfsrdma-bench-" + std::to_string(dead3))) << "x";
  kept.push_back(parent.path() / ("nfsrdma-bench-" + std::to_string(dead3)));
  // A dead PID here, but a live run holds its lock (another PID namespace).
  const int dead4 = deadPid();
  const fs::path locked = leftover(parent.path(), "nfsrdma-bench-" + std::to_string(dead4), 10);
  const int fd = ::open(locked.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  kept.push_back(locked);

  const SweptDirectories swept =
      sweepDeadRunDirectories(parent.path(), "nfsrdma-bench", ::getpid());
  ::close(fd);
  EXPECT_TRUE(swept.removed.empty());
  EXPECT_TRUE(swept.failed.empty());
  for (const auto& p : kept) EXPECT_TRUE(fs::exists(fs::symlink_status(p))) << p;
  EXPECT_TRUE(fs::exists(target / "nfsrdma-bench.s1.b1048576.j0.f0")) << "followed the link";
}

TEST(RunDirectory, ARunMakesItsOwnLocksItAndRemovesIt) {
  ScratchDir parent("run-dir");
  // A dead run that had this process's PID (PIDs come round again).
  const fs::path mine = parent.path() / ("nfsrdma-bench-" + std::to_string(::getpid()));
  leftover(parent.path(), mine.filename().string(), 100);
  const int dead = deadPid();
  leftover(parent.path(), "nfsrdma-bench-" + std::to_string(dead), 100);
  ::testing::internal::CaptureStderr();
  {
    const RunDirectory run(parent.path() / "sub", "nfsrdma-bench");
    EXPECT_EQ(run.path(), parent.path() / "sub" / mine.filename());
    EXPECT_TRUE(fs::is_directory(run.path()));
    EXPECT_TRUE(fs::is_empty(run.path()));
    // A sweeper of another run finds it locked, PID or not.
    EXPECT_TRUE(sweepDeadRunDirectories(parent.path() / "sub", "nfsrdma-bench", 0).removed.empty());
    EXPECT_TRUE(sweepDeadRunDirectories(parent.path() / "sub", "nfsrdma-bench", ::getpid())
                    .removed.empty());
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "") << "nothing left in sub/";
  EXPECT_FALSE(fs::exists(parent.path() / "sub" / mine.filename()));
  ::testing::internal::CaptureStderr();
  { const RunDirectory run(parent.path(), "nfsrdma-bench"); }
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("nfsrdma-bench: removed "), std::string::npos) << said;
  EXPECT_NE(said.find(mine.string()), std::string::npos) << said;
  EXPECT_NE(said.find("nfsrdma-bench-" + std::to_string(dead)), std::string::npos) << said;
  EXPECT_EQ(said.find('\n'), said.size() - 1) << "one line: " << said;
  EXPECT_EQ(parent.names(), std::vector<std::string>{"sub"});
}

}  // namespace
}  // namespace nfsrdma::bench
