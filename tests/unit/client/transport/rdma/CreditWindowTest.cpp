// The RPC-over-RDMA credit window (RFC 8166 section 3.3), without verbs.
#include <gtest/gtest.h>

#include <vector>

#include "client/transport/rdma/CreditWindow.h"

namespace nfsrdma::transport::rdma {
namespace {

const auto kAllLive = [](std::uint32_t) { return true; };

TEST(CreditWindow, OneCreditUntilTheServerGrantsMore) {
  CreditWindow w(64);
  EXPECT_EQ(w.granted(), 1U);
  EXPECT_TRUE(w.admit({0, 100, 1}));
  EXPECT_FALSE(w.admit({1, 100, 2}));
  EXPECT_FALSE(w.admit({2, 100, 3}));
  EXPECT_EQ(w.outstanding(), 1U);
  EXPECT_EQ(w.waiting(), 2U);
  w.onReply(1, 8, true);
  EXPECT_EQ(w.granted(), 8U);
  EXPECT_EQ(w.outstanding(), 0U);
  std::vector<std::size_t> freed;
  auto a = w.nextToPost(kAllLive, freed);
  auto b = w.nextToPost(kAllLive, freed);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->xid, 2U);  // first come, first served
  EXPECT_EQ(b->xid, 3U);
  EXPECT_FALSE(w.nextToPost(kAllLive, freed));
  EXPECT_EQ(w.outstanding(), 2U);
  EXPECT_TRUE(freed.empty());
}

// A reconnect builds a new transport and with it a new window: RFC 8166
// 3.3.1 has the client start every connection at one credit, whatever the
// old connection had been granted.
TEST(CreditWindow, ANewConnectionStartsAtOneCreditWhateverTheOldOneHad) {
  CreditWindow old(128);
  ASSERT_TRUE(old.admit(PendingSend{0, 100, 1}));
  old.onReply(1, 128, true);
  ASSERT_EQ(old.granted(), 128U);
  CreditWindow fresh(128);
  EXPECT_EQ(fresh.granted(), 1U);
  EXPECT_TRUE(fresh.admit(PendingSend{0, 100, 2}));
  EXPECT_FALSE(fresh.admit(PendingSend{1, 100, 3}));  // the second call waits for a grant
}

TEST(CreditWindow, GrantIsClampedToWhatWasAskedAndNeverZero) {
  CreditWindow w(4);
  w.onReply(9, 1000, false);
  EXPECT_EQ(w.granted(), 4U);
  w.onReply(9, 0, false);
  EXPECT_EQ(w.granted(), 1U);
}

TEST(CreditWindow, NewCallWaitsBehindEarlierWaitersEvenWithACreditFree) {
  CreditWindow w(2);
  EXPECT_TRUE(w.admit({0, 1, 1}));
  EXPECT_FALSE(w.admit({1, 1, 2}));
  w.onReply(1, 2, true);  // two credits free now, one call waits
  EXPECT_FALSE(w.admit({2, 1, 3}));
  std::vector<std::size_t> freed;
  EXPECT_EQ(w.nextToPost(kAllLive, freed)->xid, 2U);
  EXPECT_EQ(w.nextToPost(kAllLive, freed)->xid, 3U);
}

TEST(CreditWindow, StrayAndDuplicateRepliesFreeNoCredit) {
  CreditWindow w(8);
  w.onReply(0, 8, false);
  for (std::uint32_t x = 1; x <= 8; ++x) EXPECT_TRUE(w.admit({x, 1, x}));
  EXPECT_FALSE(w.admit({9, 1, 9}));
  w.onReply(77, 8, false);  // never sent
  EXPECT_EQ(w.outstanding(), 8U);
  w.onReply(1, 8, true);
  w.onReply(1, 8, false);  // the same reply again
  EXPECT_EQ(w.outstanding(), 7U);
}

TEST(CreditWindow, AbandonedAfterSendingHoldsItsCreditUntilItsReply) {
  CreditWindow w(1);
  EXPECT_TRUE(w.admit({0, 1, 5}));
  std::vector<std::size_t> freed;
  EXPECT_FALSE(w.abandon(5, freed));
  EXPECT_TRUE(freed.empty());
  EXPECT_EQ(w.outstanding(), 1U);
  w.onReply(5, 1, false);  // the late reply: the call is no longer tracked
  EXPECT_EQ(w.outstanding(), 0U);
  w.onReply(5, 1, false);  // and only once
  EXPECT_EQ(w.outstanding(), 0U);
}

TEST(CreditWindow, AbandonedWhileWaitingNeverLeavesAndReturnsItsBuffer) {
  CreditWindow w(1);
  EXPECT_TRUE(w.admit({0, 1, 1}));
  EXPECT_FALSE(w.admit({3, 1, 2}));
  EXPECT_FALSE(w.admit({4, 1, 3}));
  std::vector<std::size_t> freed;
  EXPECT_TRUE(w.abandon(2, freed));
  EXPECT_EQ(freed, std::vector<std::size_t>{3});
  w.onReply(1, 1, true);
  auto next = w.nextToPost(kAllLive, freed);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->xid, 3U);
}

TEST(CreditWindow, WaitersTheTransportNoLongerTracksAreSkipped) {
  CreditWindow w(4);
  EXPECT_TRUE(w.admit({0, 1, 1}));
  EXPECT_FALSE(w.admit({1, 1, 2}));
  EXPECT_FALSE(w.admit({2, 1, 3}));
  w.onReply(1, 4, true);
  std::vector<std::size_t> freed;
  auto next = w.nextToPost([](std::uint32_t xid) { return xid != 2; }, freed);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->xid, 3U);
  EXPECT_EQ(freed, std::vector<std::size_t>{1});
  EXPECT_EQ(w.outstanding(), 1U);
}

}  // namespace
}  // namespace nfsrdma::transport::rdma
