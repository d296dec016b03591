// counters/CounterDelta: what a cell added to counters read before and
// after it; a counter the host lacks in either reading, or one that was
// reset between them, has no delta.
#include <gtest/gtest.h>

#include <cstdint>

#include "counters/CounterDelta.h"

namespace nfsrdma::counters {
namespace {

TEST(CounterDelta, EachCounterReadTwiceHasItsDifference) {
  const NamedValues before{{{"rcvd_seq_err", 3}, {"duplicate_request", 10}, {"gone", 1}}};
  const NamedValues after{{{"duplicate_request", 15}, {"rcvd_seq_err", 3}, {"new", 4}}};
  const CounterDeltas d = counterDeltas(before, after);
  ASSERT_EQ(d.deltas.values.size(), 2U);
  EXPECT_EQ(d.deltas.values[0].first, "duplicate_request");  // after's order
  EXPECT_EQ(d.deltas.get("duplicate_request"), 5);
  EXPECT_EQ(d.deltas.get("rcvd_seq_err"), 0);  // read twice, did not move: a real 0
  EXPECT_FALSE(d.deltas.get("gone").has_value());
  EXPECT_FALSE(d.deltas.get("new").has_value());
  EXPECT_TRUE(d.reset.empty());
}

TEST(CounterDelta, ACounterThatWentBackwardsWasResetAndHasNoDelta) {
  const CounterDeltas d =
      counterDeltas(NamedValues{{{"rdma_stat_recv", 900}}}, NamedValues{{{"rdma_stat_recv", 40}}});
  EXPECT_TRUE(d.deltas.values.empty());
  ASSERT_EQ(d.reset.size(), 1U);
  EXPECT_EQ(d.reset[0], "rdma_stat_recv");
  // A difference beyond any counter's range is no delta either.
  const CounterDeltas huge = counterDeltas(NamedValues{{{"idle_time", INT64_MIN}}},
                                           NamedValues{{{"idle_time", INT64_MAX}}});
  EXPECT_TRUE(huge.deltas.values.empty());
  EXPECT_EQ(huge.reset.size(), 1U);
}

}  // namespace
}  // namespace nfsrdma::counters
