// The anchor's socket floor: it receives whole records of the workload's
// block size, keeps to the rate it was given (it stands for a server that
// answers no faster than the anchor client was served), charges only the
// receiving thread, and refuses a rate it cannot pace.
#include <gtest/gtest.h>

#include <chrono>

#include "bench/anchor/SocketFloor.h"

namespace nfsrdma::bench {
namespace {

TEST(SocketFloorTest, ReceivesWholeBlocksAtNoMoreThanTheGivenRate) {
  ReadWorkload w;
  w.blockSize = 64 * 1024;
  w.runtime = std::chrono::milliseconds(400);
  constexpr double kRate = 500;
  const ReadMeasurement m = runSocketFloor(w, kRate, 16 * 1024);  // four replies per block
  ASSERT_TRUE(m.error.empty()) << m.error;
  EXPECT_EQ(m.client, "socket-floor");
  EXPECT_GT(m.ops, 0U);
  EXPECT_EQ(m.bytes, m.ops * w.blockSize);
  // The sender keeps a schedule: one record per 1/kRate, so however fast the
  // receiver is it cannot see more than the schedule allows (plus the first).
  EXPECT_LE(static_cast<double>(m.ops), kRate * m.seconds + 1) << m.seconds << " s";
  EXPECT_GE(m.seconds, 0.4);
  EXPECT_GT(m.cpuSeconds, 0.0);
  // The receiving thread sleeps between records: far less than a CPU's worth.
  EXPECT_LT(m.cpuSeconds, m.seconds);
}

TEST(SocketFloorTest, RefusesAZeroRate) {
  ReadWorkload w;
  w.blockSize = 4096;
  const ReadMeasurement m = runSocketFloor(w, 0, 0);
  EXPECT_EQ(m.error, "socket floor: needs a positive rate and block size");
  EXPECT_EQ(m.ops, 0U);
}

}  // namespace
}  // namespace nfsrdma::bench
