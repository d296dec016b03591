// SlotTable: lowest free slot first, sequence ids, retirement, highest slot
// in use and the server's target_highest_slotid.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <stdexcept>

#include "client/nfs4/SlotTable.h"

namespace nfsrdma::nfs4 {
namespace {

TEST(SlotTable, LowestFreeSlotFirst) {
  SlotTable t(4);
  EXPECT_EQ(t.size(), 4U);
  for (std::uint32_t i = 0; i < 4; ++i) EXPECT_EQ(t.acquire(), std::optional<std::uint32_t>(i));
  EXPECT_EQ(t.acquire(), std::nullopt);
  EXPECT_EQ(t.inUse(), 4U);
  t.release(2, SlotOutcome::kExecuted);
  t.release(1, SlotOutcome::kExecuted);
  EXPECT_EQ(t.acquire(), std::optional<std::uint32_t>(1));
  EXPECT_EQ(t.acquire(), std::optional<std::uint32_t>(2));
  EXPECT_EQ(t.acquire(), std::nullopt);
}

TEST(SlotTable, SequenceIdsStartAtOneAndAdvanceOnlyWhenExecuted) {
  SlotTable t(2);
  ASSERT_EQ(t.acquire(), std::optional<std::uint32_t>(0));
  EXPECT_EQ(t.nextSequenceId(0), 1U);
  t.release(0, SlotOutcome::kExecuted);
  ASSERT_EQ(t.acquire(), std::optional<std::uint32_t>(0));
  EXPECT_EQ(t.nextSequenceId(0), 2U);
  t.release(0, SlotOutcome::kNotExecuted);
  ASSERT_EQ(t.acquire(), std::optional<std::uint32_t>(0));
  EXPECT_EQ(t.nextSequenceId(0), 2U) << "a rejected SEQUENCE must be retried with the same id";
  t.release(0, SlotOutcome::kExecuted);
  EXPECT_EQ(t.nextSequenceId(0), 3U);
  EXPECT_EQ(t.nextSequenceId(1), 1U) << "slots have independent sequence ids";
}

TEST(SlotTable, UnknownOutcomeRetiresTheSlot) {
  SlotTable t(2);
  ASSERT_EQ(t.acquire(), std::optional<std::uint32_t>(0));
  t.release(0, SlotOutcome::kUnknown);
  EXPECT_EQ(t.retired(), 1U);
  EXPECT_EQ(t.inUse(), 0U);
  EXPECT_EQ(t.acquire(), std::optional<std::uint32_t>(1));
  EXPECT_EQ(t.acquire(), std::nullopt) << "a retired slot is never handed out again";
  t.release(1, SlotOutcome::kUnknown);
  EXPECT_EQ(t.retired(), 2U);
  EXPECT_EQ(t.acquire(), std::nullopt);
}

TEST(SlotTable, HighestSlotInUse) {
  SlotTable t(8);
  EXPECT_EQ(t.highestSlotInUse(), 0U);  // idle
  for (int i = 0; i < 4; ++i) (void)t.acquire();
  EXPECT_EQ(t.highestSlotInUse(), 3U);
  t.release(3, SlotOutcome::kExecuted);
  EXPECT_EQ(t.highestSlotInUse(), 2U);
  t.release(0, SlotOutcome::kExecuted);
  EXPECT_EQ(t.highestSlotInUse(), 2U) << "freeing a lower slot does not lower the highest";
  t.release(2, SlotOutcome::kExecuted);
  t.release(1, SlotOutcome::kExecuted);
  EXPECT_EQ(t.highestSlotInUse(), 0U);
}

TEST(SlotTable, TargetHighestLimitsAcquisition) {
  SlotTable t(4);
  t.setTargetHighest(1);
  EXPECT_EQ(t.acquire(), std::optional<std::uint32_t>(0));
  EXPECT_EQ(t.acquire(), std::optional<std::uint32_t>(1));
  EXPECT_EQ(t.acquire(), std::nullopt);
  t.setTargetHighest(0);
  t.release(0, SlotOutcome::kExecuted);
  t.release(1, SlotOutcome::kExecuted);
  EXPECT_EQ(t.acquire(), std::optional<std::uint32_t>(0));
  EXPECT_EQ(t.acquire(), std::nullopt);
  t.setTargetHighest(3);
  EXPECT_EQ(t.acquire(), std::optional<std::uint32_t>(1));
  EXPECT_EQ(t.acquire(), std::optional<std::uint32_t>(2));
  EXPECT_EQ(t.acquire(), std::optional<std::uint32_t>(3));
  EXPECT_EQ(t.acquire(), std::nullopt);
}

// The server lowered its target to slot 0, then slot 0 was lost to a
// timeout: waiting for a slot at or below the target would wait forever
// while slots 1..3 are free, so the lowest of those is used.
TEST(SlotTable, EverySlotWithinTheTargetRetiredFallsBackToTheRest) {
  SlotTable t(4);
  t.setTargetHighest(1);
  EXPECT_EQ(t.acquire(), std::optional<std::uint32_t>(0));
  EXPECT_EQ(t.acquire(), std::optional<std::uint32_t>(1));
  t.release(0, SlotOutcome::kUnknown);
  EXPECT_EQ(t.acquire(), std::nullopt);  // slot 1 is still usable: wait for it
  t.release(1, SlotOutcome::kUnknown);
  EXPECT_EQ(t.acquire(), std::optional<std::uint32_t>(2));
  EXPECT_EQ(t.acquire(), std::optional<std::uint32_t>(3));
  EXPECT_EQ(t.acquire(), std::nullopt);
  t.release(3, SlotOutcome::kExecuted);
  EXPECT_EQ(t.nextSequenceId(3), 2U);
  EXPECT_EQ(t.acquire(), std::optional<std::uint32_t>(3));
}

TEST(SlotTable, TargetAboveTheTableIsCappedAtItsSize) {
  SlotTable t(2);
  t.setTargetHighest(100);
  EXPECT_EQ(t.acquire(), std::optional<std::uint32_t>(0));
  EXPECT_EQ(t.acquire(), std::optional<std::uint32_t>(1));
  EXPECT_EQ(t.acquire(), std::nullopt);
}

// sr_target_highest_slotid comes from the server (Session.cpp passes it
// straight in). 0xffffffff overflows targetHighest_ + 1 to 0 in acquire(),
// so no slot is ever handed out again: every later call stalls.
TEST(SlotTable, MaximumTargetFromTheServerDoesNotStallTheTable) {
  SlotTable t(2);
  t.setTargetHighest(0xffffffffU);
  EXPECT_EQ(t.acquire(), std::optional<std::uint32_t>(0));
  EXPECT_EQ(t.acquire(), std::optional<std::uint32_t>(1));
}

TEST(SlotTable, MisuseIsReported) {
  EXPECT_THROW(SlotTable(0), std::invalid_argument);
  SlotTable t(2);
  EXPECT_THROW(t.release(0, SlotOutcome::kExecuted), std::logic_error);  // not acquired
  EXPECT_THROW(t.release(5, SlotOutcome::kExecuted), std::out_of_range);
}

}  // namespace
}  // namespace nfsrdma::nfs4
