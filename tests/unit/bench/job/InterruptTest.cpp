// The interrupt flag and its signal handlers (job/Interrupt.h). A review
// found that a SIGTERM after a SIGINT did not kill; this fails without its
// fix.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "bench/job/Interrupt.h"

namespace nfsrdma::bench {
namespace {

using namespace std::chrono_literals;

// The first signal is kept; a second one of either kind kills.
TEST(Interrupt, TheFirstSignalIsKept) {
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

TEST(InterruptDeathTest, ASecondSignalOfEitherKindKills) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(secondSignalAfter(SIGINT, SIGTERM), ::testing::KilledBySignal(SIGTERM), "");
  EXPECT_EXIT(secondSignalAfter(SIGTERM, SIGINT), ::testing::KilledBySignal(SIGINT), "");
  EXPECT_EXIT(secondSignalAfter(SIGINT, SIGINT), ::testing::KilledBySignal(SIGINT), "");
}

}  // namespace
}  // namespace nfsrdma::bench
