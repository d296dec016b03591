// The path engine (file/engines/EnginePath.cpp): io_uring on files of a
// mounted directory. The tests came from reviews that found a bug; each
// fails without its fix.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/file/FileRun.h"
#include "bench/file/engines/Engine.h"
#include "bench/file/engines/UringRun.h"
#include "bench/job/FileJob.h"
#include "bench/job/FileProfile.h"
#include "bench/job/Interrupt.h"
#include "tests/unit/bench/ErrorOf.h"
#include "tests/unit/bench/ScratchDir.h"
#include "tests/unit/bench/file/FullFifo.h"

namespace nfsrdma::bench {
namespace {

using namespace std::chrono_literals;

using testing::errorOf;
using testing::FullFifo;
using testing::ScratchDir;

// A failed fsync in finish() still closes every fd once; the destructor must
// not close them again (the number may be reused by then).
TEST(EnginePath, PathEngineClosesEveryFdOnceWhenFsyncFails) {
  ScratchDir dir("review-fsync");
  std::ofstream(dir.path() / "a") << "data";
  ASSERT_EQ(::mkfifo((dir.path() / "b").c_str(), 0644), 0);  // fsync on a FIFO: EINVAL
  TargetSpec t = TargetSpec::parse("here", "path:" + dir.str());
  t.direct = false;
  auto engine = makeEngine(t);
  engine->open({"a", "b"}, false);
  EXPECT_NE(errorOf([&] { engine->finish(); }).find("fsync: "), std::string::npos);
  // Takes the lowest free number: the one "a" had.
  const int mine = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(mine, 0);
  engine.reset();
  EXPECT_NE(::fcntl(mine, F_GETFD), -1)
      << "the engine's destructor closed fd " << mine << " a second time";
  ::close(mine);
}

// A job of profile at depth on the file "f" (a FIFO), and a path engine
// with it open (buffered: a FIFO takes no O_DIRECT).
JobSpec fifoJob(const char* profile, std::uint32_t depth) {
  JobSpec s;
  s.profile = profileByName(profile);
  s.iodepth = depth;
  s.files = {"f"};
  s.fileBytes = 4U << 20;
  return s;
}

std::unique_ptr<Engine> fifoEngine(const ScratchDir& dir, const JobSpec& s) {
  TargetSpec t = TargetSpec::parse("here", "path:" + dir.str());
  t.direct = false;
  auto engine = makeEngine(t);
  engine->open(s.files, false);
  return engine;
}

// A path engine whose run fails has no request left in flight: the kernel
// would otherwise go on using the driver's buffers after it is gone.
TEST(EnginePath, APathEngineCancelsItsRequestsBeforeItsErrorLeaves) {
  clearInterrupt();
  ScratchDir dir("interrupt-cancel");
  FullFifo fifo(dir.path() / "f");
  JobSpec s = fifoJob("128k-write", 4);
  s.layout = true;
  JobDriver d(s, nullptr);
  auto engine = fifoEngine(dir, s);
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

// A wait asks for a quarter of the depth (fio's best at QD32 waits for 8),
// never for none.
TEST(UringRun, AWaitAsksForAQuarterOfTheDepth) {
  EXPECT_EQ(reapBatch(1), 1U);
  EXPECT_EQ(reapBatch(4), 1U);
  EXPECT_EQ(reapBatch(8), 2U);
  EXPECT_EQ(reapBatch(32), 8U);
  EXPECT_EQ(reapBatch(64), 16U);
}

// The ring loop reads the clock once per round, not per request: a write's
// latency must still run from its submission to the round that reaped it.
// A full FIFO a reader drains by one 4 KiB page every 20 ms completes one
// write per 20 ms: at depth 1 each waits about that long.
TEST(EnginePath, LatencyRunsFromSubmissionToTheReapingAtTheTargetsPace) {
  clearInterrupt();
  ScratchDir dir("ring-latency");
  FullFifo fifo(dir.path() / "f");
  JobSpec s = fifoJob("4k-randwrite", 1);
  s.options.ramp = 0ms;
  s.options.runtime = 600ms;
  JobDriver d(s, nullptr);
  auto engine = fifoEngine(dir, s);
  std::atomic<bool> done{false};
  std::thread reader([&] {
    const int fd = ::open((dir.path() / "f").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    std::vector<char> page(4096);
    for (int k = 0; k < 500 && !done; ++k) {  // bounded: 10 s
      std::this_thread::sleep_for(20ms);
      (void)::read(fd, page.data(), page.size());
    }
    ::close(fd);
  });
  engine->run(d);
  done = true;
  reader.join();
  engine->abandon();
  const LatencyHistogram& lat = d.result().dir[static_cast<int>(IoDirection::Write)].lat;
  ASSERT_GE(lat.count(), 5U);
  EXPECT_GE(lat.percentile(50), 8e6)
      << "a write's latency is shorter than the pace it completes at";
  EXPECT_LE(lat.percentile(50), 200e6);
}

}  // namespace
}  // namespace nfsrdma::bench
