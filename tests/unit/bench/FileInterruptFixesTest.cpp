// Why: a second review of `nfsrdma-bench file` / `compare` found that (1) an
// interrupt removed files of the set that were complete before the run, (2)
// effective_iodepth with reads-per-compound counted writes as grouped, (3)
// `compare --html -` wrote " JSON: ..." into the HTML on stdout, (4) a
// SIGTERM after a SIGINT did not kill, (5) an error after Ctrl-C (the
// straggler grace running out) exited 1 without cleanup, and io_uring
// requests were still in flight when their buffers were freed, (6) a job
// waiting out a busy server did not see Ctrl-C, (7) the free-space margin
// grew without bound with the file system, and (8) an interrupt COMMITted
// data about to be removed. Each test fails without its fix.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/BenchCommands.h"
#include "bench/compare/CompareMatrix.h"
#include "bench/file/engines/Engine.h"
#include "bench/file/FileJob.h"
#include "bench/file/FileRun.h"
#include "client/Error.h"
#include "client/nfs4/Nfs4Status.h"
#include "tests/unit/bench/CommandCapture.h"
#include "tests/unit/bench/FieldReport.h"
#include "tests/unit/bench/ScratchDir.h"

namespace nfsrdma::bench {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

using testing::ScratchDir;

using testing::CommandResult;
using testing::runCommand;

// Sends the signal to this process after the delay, on its own thread.
class DelayedSignal {
 public:
  DelayedSignal(std::chrono::milliseconds after, int signal)
      : thread_([after, signal] {
          std::this_thread::sleep_for(after);
          ::kill(::getpid(), signal);
        }) {}
  ~DelayedSignal() { thread_.join(); }

 private:
  std::thread thread_;
};

// A FIFO whose pipe is full: a write into it waits until someone reads, so a
// layout into it never finishes by itself. The test keeps both ends open.
class FullFifo {
 public:
  explicit FullFifo(const fs::path& p) {
    if (::mkfifo(p.c_str(), 0644) != 0) throw std::runtime_error("mkfifo " + p.string());
    fd_ = ::open(p.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) throw std::runtime_error("open " + p.string());
    std::vector<char> junk(65536, 'x');
    for (ssize_t n; (n = ::write(fd_, junk.data(), junk.size())) > 0;)
      filled_ += static_cast<std::size_t>(n);
  }
  ~FullFifo() { ::close(fd_); }
  std::size_t filled() const { return filled_; }
  // Everything that can be read within the time (writers waiting get room).
  std::size_t drain(std::chrono::milliseconds during) const {
    std::vector<char> buf(65536);
    std::size_t got = 0;
    const auto end = std::chrono::steady_clock::now() + during;
    while (std::chrono::steady_clock::now() < end) {
      const ssize_t n = ::read(fd_, buf.data(), buf.size());
      if (n > 0) {
        got += static_cast<std::size_t>(n);
      } else {
        std::this_thread::sleep_for(5ms);
      }
    }
    return got;
  }

 private:
  int fd_ = -1;
  std::size_t filled_ = 0;
};

// 1. A kept file set with one file missing: the layout writes the missing
// one only, and an interrupt removes that one only.
TEST(FileInterruptFixes, AnInterruptKeepsTheFilesThatWereCompleteBefore) {
  ScratchDir dir("interrupt-kept");
  const std::vector<std::string> common = {"file",
                                           "--profile",
                                           "4k-randread",
                                           "--target",
                                           "path:" + dir.str(),
                                           "--size",
                                           "4m",
                                           "--nrfiles",
                                           "2",
                                           "--direct",
                                           "0",
                                           "--ramp",
                                           "0"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> a = common;
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  const CommandResult first = runCommand(runFileCommand, with({"--runtime", "0.2"}));
  ASSERT_EQ(first.rc, 0) << first.err;
  const auto names = dir.names();
  ASSERT_EQ(names.size(), 2U);
  const fs::path kept = dir.path() / names[0];
  fs::remove(dir.path() / names[1]);
  struct stat before {};
  ASSERT_EQ(::stat(kept.c_str(), &before), 0);
  std::this_thread::sleep_for(20ms);  // a rewrite would show in the mtime

  CommandResult r;
  {
    DelayedSignal ctrlC(700ms, SIGINT);
    r = runCommand(runFileCommand, with({"--runtime", "20"}));
  }
  EXPECT_EQ(r.rc, 130) << r.err;
  EXPECT_NE(r.err.find("interrupted by SIGINT; removed the 1 file(s) it laid out"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(dir.names(), std::vector<std::string>{names[0]});
  struct stat after {};
  ASSERT_EQ(::stat(kept.c_str(), &after), 0);
  EXPECT_EQ(after.st_size, before.st_size);
  EXPECT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
  EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec) << "the complete file was rewritten";
}

TEST(FileInterruptFixes, CreatedFilesCountsEachFileOnceAndKnowsWhatItHolds) {
  TargetSpec local = TargetSpec::parse("local", "path:/tmp/x");
  TargetSpec nfs = TargetSpec::parse("nfs-tcp", "nfs:nfs://127.0.0.1/export");
  nfs.localDir = "/tmp/x";  // the embedded server's export: the same directory
  CreatedFiles c;
  c.add(local, {"a", "b"});
  c.add(nfs, {"b"});  // laid out again after a failed cell
  EXPECT_EQ(c.count(), 2U);
  EXPECT_TRUE(c.holdsAll(nfs, {"a", "b"}));
  EXPECT_FALSE(c.holdsAll(nfs, {"a", "c"}));
  EXPECT_FALSE(c.holdsAll(TargetSpec::parse("other", "path:/tmp/y"), {"a"}));
}

// 2. Only reads share a COMPOUND's slot; writes take one each.
TEST(FileInterruptFixes, EffectiveIodepthGroupsOnlyReads) {
  // iodepth 128 of 4 KiB, 16 slots (or RDMA credits), reads-per-compound 4: groups of 4.
  EXPECT_EQ(nfsEffectiveIodepth(128, 4096, 100, 1U << 20, 16, 4, 16), 64U);
  EXPECT_EQ(nfsEffectiveIodepth(128, 4096, 0, 1U << 20, 16, 4, 16), 16U);
  // 70/30: 16 slots / (0.7/4 + 0.3) = 33.7 requests.
  EXPECT_EQ(nfsEffectiveIodepth(128, 4096, 70, 1U << 20, 16, 4, 16), 33U);
  // Without grouping, or with blocks above one READ: a slot per piece.
  EXPECT_EQ(nfsEffectiveIodepth(128, 4096, 100, 1U << 20, 16, 1, 16), 16U);
  EXPECT_EQ(nfsEffectiveIodepth(16, 4U << 20, 100, 1U << 20, 32, 4, 1), 8U);
  // Groups are at most a quarter of the queue, and what the client takes.
  EXPECT_EQ(nfsEffectiveIodepth(8, 4096, 100, 1U << 20, 1, 16, 16), 2U);
  EXPECT_EQ(nfsEffectiveIodepth(128, 4096, 100, 1U << 20, 16, 16, 2), 32U);
  // Never more than asked for.
  EXPECT_EQ(nfsEffectiveIodepth(32, 4096, 100, 1U << 20, 64, 4, 16), 32U);
}

// 3. With --html - stdout is the HTML alone.
TEST(FileInterruptFixes, CompareHtmlDashHasNothingBeforeTheHtml) {
  ScratchDir dir("interrupt-html");
  const std::string saved = (dir.path() / "saved.json").string();
  const std::string json = (dir.path() / "again.json").string();
  std::ofstream(saved) << compareToJson(testing::fieldNotesReport());
  const CommandResult r =
      runCommand(runCompareCommand, {"compare", "--results", saved, "--json", json, "--html", "-"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.rfind("<!DOCTYPE html>", 0), 0U) << r.out.substr(0, 80);
  EXPECT_EQ(r.out.find("JSON:"), std::string::npos);
  EXPECT_NE(r.err.find(" JSON: " + json), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(json));
}

// 4. The first signal is kept; a second one of either kind kills.
TEST(FileInterruptFixes, TheFirstSignalIsKept) {
  clearInterrupt();
  EXPECT_TRUE(requestInterrupt(SIGINT));
  EXPECT_FALSE(requestInterrupt(SIGTERM));
  EXPECT_EQ(interruptSignal(), SIGINT);
  clearInterrupt();
}

void secondSignalAfter(int first, int second) {
  InterruptHandlers handlers;
  ::kill(::getpid(), first);
  std::this_thread::sleep_for(20ms);
  if (interruptSignal() != first) std::_Exit(2);
  ::kill(::getpid(), second);
  std::this_thread::sleep_for(3s);  // not killed: the test sees exit 0
  std::_Exit(0);
}

TEST(FileInterruptFixesDeathTest, ASecondSignalOfEitherKindKills) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(secondSignalAfter(SIGINT, SIGTERM), ::testing::KilledBySignal(SIGTERM), "");
  EXPECT_EXIT(secondSignalAfter(SIGTERM, SIGINT), ::testing::KilledBySignal(SIGINT), "");
  EXPECT_EXIT(secondSignalAfter(SIGINT, SIGINT), ::testing::KilledBySignal(SIGINT), "");
}

// 5. When the 10 s after Ctrl-C run out with a request still out, the error
// that ends the layout is the interrupt's: cleanup and exit 130.
TEST(FileInterruptFixes, AnErrorAfterCtrlCStillCleansUpAndExits130) {
  ScratchDir dir("interrupt-grace");
  const std::vector<std::string> args = {
      "file",     "--profile", "4k-randread", "--target", "path:" + dir.str(), "--size", "1m",
      "--direct", "0",         "--ramp",      "0",        "--runtime",         "20"};
  // The file's name as the command makes it: lay it out once, replace it by a full FIFO.
  {
    std::vector<std::string> quick = args;
    quick.back() = "0.1";
    ASSERT_EQ(runCommand(runFileCommand, quick).rc, 0);
  }
  const auto names = dir.names();
  ASSERT_EQ(names.size(), 1U);
  fs::remove(dir.path() / names[0]);
  FullFifo fifo(dir.path() / names[0]);
  CommandResult r;
  {
    DelayedSignal ctrlC(500ms, SIGINT);
    r = runCommand(runFileCommand, args);
  }
  EXPECT_EQ(r.rc, 130) << r.err;
  EXPECT_NE(r.err.find("interrupted by SIGINT; removed the 1 file(s) it laid out"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(dir.names().empty());
}

// 5. A path engine whose run fails has no request left in flight: the
// kernel would otherwise go on using the driver's buffers after it is gone.
TEST(FileInterruptFixes, APathEngineCancelsItsRequestsBeforeItsErrorLeaves) {
  clearInterrupt();
  ScratchDir dir("interrupt-cancel");
  FullFifo fifo(dir.path() / "f");
  TargetSpec t = TargetSpec::parse("here", "path:" + dir.str());
  t.direct = false;
  JobSpec s;
  s.profile = profileByName("128k-write");
  s.iodepth = 4;
  s.files = {"f"};
  s.fileBytes = 4U << 20;
  s.layout = true;
  JobDriver d(s, nullptr);
  auto engine = makeEngine(t);
  engine->open(s.files, false);
  std::string error;
  {
    std::thread ctrlC([] {
      std::this_thread::sleep_for(300ms);
      requestInterrupt(SIGINT);
    });
    try {
      engine->run(d);
    } catch (const std::exception& e) {
      error = e.what();
    }
    ctrlC.join();
  }
  clearInterrupt();
  EXPECT_NE(error.find("completions missing"), std::string::npos) << error;
  // The engine is still there: a write it left in flight would now fill the room made.
  EXPECT_EQ(fifo.drain(300ms), fifo.filled());
  engine->abandon();
}

// 6. A call the server keeps answering "grace" is not started again after
// Ctrl-C, and not beyond the budget.
TEST(FileInterruptFixes, BusyRetriesStopAtAnInterruptAndAtTheBudget) {
  clearInterrupt();
  const auto grace = [] {
    throw NfsException(makeError(nfs4::statusError(nfs4::kErrGrace), "open /export/f"));
  };
  int calls = 0;
  try {
    callWhileBusy(
        [&] {
          if (++calls == 2) requestInterrupt(SIGINT);
          grace();
        },
        std::chrono::minutes(2));
    ADD_FAILURE() << "no exception";
  } catch (const Interrupted& e) {
    EXPECT_EQ(e.signal(), SIGINT);
  }
  EXPECT_EQ(calls, 2);
  // After Ctrl-C a first attempt still runs (the cleanup's REMOVEs), but a busy one is not
  // repeated.
  calls = 0;
  EXPECT_NO_THROW(callWhileBusy([&] { ++calls; }, 1s));
  EXPECT_EQ(calls, 1);
  calls = 0;
  EXPECT_THROW(callWhileBusy(
                   [&] {
                     ++calls;
                     grace();
                   },
                   std::chrono::minutes(2)),
               Interrupted);
  EXPECT_EQ(calls, 1);
  clearInterrupt();

  calls = 0;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    callWhileBusy(
        [&] {
          ++calls;
          grace();
        },
        300ms);
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("NFS4ERR_GRACE"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("busy-timeout=300 ms in all"), std::string::npos)
        << e.what();
  }
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 300ms);
  EXPECT_GE(calls, 2);
  calls = 0;
  EXPECT_THROW(callWhileBusy(
                   [&] {
                     ++calls;
                     grace();
                   },
                   0ms),
               NfsException);  // busy-timeout=0: the first answer is the error
  EXPECT_EQ(calls, 1);
  calls = 0;
  EXPECT_THROW(callWhileBusy(
                   [&] {
                     ++calls;
                     throw NfsException(makeError(nfs4::statusError(nfs4::kErrNoEnt), "open x"));
                   },
                   2s),
               NfsException);
  EXPECT_EQ(calls, 1);
  // The slice the client gets is what bounds the wait after Ctrl-C.
  EXPECT_LE(kBusySlice, 2s);
}

// 7. The margin is capped: a small layout fits a huge file system with room.
TEST(FileInterruptFixes, TheFreeSpaceMarginIsCappedAt4GiB) {
  FileOptions o;
  o.sizeBytes = 1ULL << 30;
  const std::uint64_t pib = 1ULL << 50;
  EXPECT_NO_THROW(checkFreeSpace(o, "/big", 1ULL << 30, 100ULL << 30, pib));
  try {
    checkFreeSpace(o, "/big", 2ULL << 30, 5ULL << 30, pib);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("(5 GiB free, 4 GiB kept spare)"), std::string::npos)
        << e.what();
  }
  // Small file systems keep at least 64 MiB, mid-sized ones 1%.
  EXPECT_THROW(checkFreeSpace(o, "/s", 1ULL << 30, (1ULL << 30) + (32ULL << 20), 2ULL << 30),
               std::invalid_argument);
  EXPECT_NO_THROW(checkFreeSpace(o, "/m", 1ULL << 30, (1ULL << 30) + (2ULL << 30), 100ULL << 30));
  EXPECT_THROW(checkFreeSpace(o, "/m", 1ULL << 30, (1ULL << 30) + (512ULL << 20), 100ULL << 30),
               std::invalid_argument);
}

// 8. Files about to be removed are closed without COMMIT or fsync.
class CountingEngine final : public Engine {
 public:
  std::vector<std::uint64_t> open(const std::vector<std::string>&, bool) override { return {}; }
  void run(JobDriver&) override {}
  void commit() override { ++commits; }
  void finish() override { ++finishes; }
  void abandon() override { ++abandons; }
  int commits = 0, finishes = 0, abandons = 0;
};

TEST(FileInterruptFixes, AnInterruptDoesNotCommitFilesAboutToBeRemoved) {
  CountingEngine removed;
  EXPECT_THROW(stopInterrupted(removed, SIGINT, false), Interrupted);
  EXPECT_EQ(removed.finishes + removed.commits, 0);
  EXPECT_EQ(removed.abandons, 1);
  CountingEngine kept;
  try {
    stopInterrupted(kept, SIGTERM, true);
  } catch (const Interrupted& e) {
    EXPECT_EQ(e.signal(), SIGTERM);
  }
  EXPECT_EQ(kept.finishes, 1);
  EXPECT_EQ(kept.abandons, 0);

  // The path engine's abandon() does not fsync (a FIFO's fsync fails: finish() would say so).
  ScratchDir dir("interrupt-abandon");
  ASSERT_EQ(::mkfifo((dir.path() / "p").c_str(), 0644), 0);
  TargetSpec t = TargetSpec::parse("here", "path:" + dir.str());
  t.direct = false;
  auto engine = makeEngine(t);
  const int probe = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ::close(probe);
  engine->open({"p"}, false);
  EXPECT_NO_THROW(engine->abandon());
  const int again = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  EXPECT_EQ(again, probe) << "abandon() left the fd open";
  ::close(again);
}

}  // namespace
}  // namespace nfsrdma::bench
