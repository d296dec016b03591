// The path engine (file/engines/EnginePath.cpp): io_uring on files of a
// mounted directory. The tests came from reviews that found a bug; each
// fails without its fix.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "bench/file/FileJob.h"
#include "bench/file/FileProfile.h"
#include "bench/file/FileRun.h"
#include "bench/file/Interrupt.h"
#include "bench/file/engines/Engine.h"
#include "tests/unit/bench/ErrorOf.h"
#include "tests/unit/bench/FullFifo.h"
#include "tests/unit/bench/ScratchDir.h"

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

// A path engine whose run fails has no request left in flight: the kernel
// would otherwise go on using the driver's buffers after it is gone.
TEST(EnginePath, APathEngineCancelsItsRequestsBeforeItsErrorLeaves) {
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

}  // namespace
}  // namespace nfsrdma::bench
