// counters/PoolStats: /proc/fs/nfsd/pool_stats as 6.12 prints it, columns
// found by the header's names, and malformed files refused with their line.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "counters/PoolStats.h"

namespace nfsrdma::counters {
namespace {

std::string errorOf(const std::string& text) {
  try {
    parsePoolStats(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(PoolStats, ReadsEachPoolOf612) {
  const auto pools = parsePoolStats(
      "# pool packets-arrived sockets-enqueued threads-woken threads-timedout\n"
      "0 123456 130012 9876 0\n"
      "1 7 8 9 0\n");
  ASSERT_EQ(pools.size(), 2U);
  EXPECT_EQ(pools[0].pool, 0U);
  EXPECT_EQ(pools[0].packetsArrived, 123456U);
  EXPECT_EQ(pools[0].socketsEnqueued, 130012U);
  EXPECT_EQ(pools[0].threadsWoken, 9876U);
  EXPECT_EQ(pools[0].threadsTimedout, 0U);
  EXPECT_EQ(pools[1].threadsWoken, 9U);
}

TEST(PoolStats, FindsColumnsByNameAndLeavesOutAnAbsentOne) {
  const auto pools = parsePoolStats(
      "# pool threads-woken sockets-enqueued packets-arrived\n"
      "0 3 2 1\n");
  ASSERT_EQ(pools.size(), 1U);
  EXPECT_EQ(pools[0].packetsArrived, 1U);
  EXPECT_EQ(pools[0].threadsWoken, 3U);
  EXPECT_FALSE(pools[0].threadsTimedout.has_value());
}

TEST(PoolStats, RefusesWhatIsNotPoolStats) {
  EXPECT_EQ(errorOf(""), "pool_stats line 1: expected the header '# pool ...' (the file is empty)");
  EXPECT_EQ(errorOf("0 1 2 3 0\n"), "pool_stats line 1: expected the header '# pool ...'");
  EXPECT_EQ(errorOf("# pool packets-arrived\n"),
            "pool_stats line 1: expected the columns pool, packets-arrived, sockets-enqueued and "
            "threads-woken");
  EXPECT_EQ(errorOf("# pool packets-arrived sockets-enqueued threads-woken\n0 1 2\n"),
            "pool_stats line 2: 4 numbers, as the header names, got 3");
  EXPECT_EQ(errorOf("# pool packets-arrived sockets-enqueued threads-woken\n0 1 -2 3\n"),
            "pool_stats line 2: '-2' is not a whole number");
}

}  // namespace
}  // namespace nfsrdma::counters
