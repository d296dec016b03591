// nfs4::BusyRetry: which DELAY and GRACE answers are sent again, and the
// pauses between attempts within the budget.
#include <gtest/gtest.h>

#include <vector>

#include "client/nfs4/BusyRetry.h"
#include "client/nfs4/Compound.h"
#include "client/nfs4/Nfs4Status.h"

namespace nfsrdma::nfs4 {
namespace {

using namespace std::chrono_literals;
using Clock = BusyRetry::Clock;

TEST(BusyRetry, OnlyDelayAndGraceAnswersBeforeAnyStateChangeAreRetried) {
  constexpr auto kNone = CompoundEncoder::kAllIdempotent;
  EXPECT_TRUE(BusyRetry::retryable(kErrDelay, 0, kNone));  // SEQUENCE itself: nothing ran
  EXPECT_TRUE(BusyRetry::retryable(kErrDelay, 4, kNone));
  EXPECT_TRUE(BusyRetry::retryable(kErrGrace, 3, 3));  // the OPEN itself was refused
  EXPECT_TRUE(BusyRetry::retryable(kErrGrace, 2, 3));
  EXPECT_FALSE(BusyRetry::retryable(kErrDelay, 4, 3));  // a GETATTR after an OPEN that ran
  EXPECT_FALSE(BusyRetry::retryable(kErrGrace, 5, 2));
  EXPECT_FALSE(BusyRetry::retryable(kErrNoEnt, 1, kNone));
  EXPECT_FALSE(BusyRetry::retryable(kErrIo, 1, kNone));
  EXPECT_FALSE(BusyRetry::retryable(kNfs4Ok, 1, kNone));
}

// What Client::run sees: the returned error, whether the results got past
// SEQUENCE, the COMPOUND4res status and result count, the encoder's index.
// pread/pwrite resend an asynchronous result by its error alone.
TEST(BusyRetry, BusyErrorsAreDelayAndGraceOnly) {
  EXPECT_TRUE(BusyRetry::busy(makeError(statusError(kErrDelay), "read /x")));
  EXPECT_TRUE(BusyRetry::busy(makeError(statusError(kErrGrace), "read /x")));
  EXPECT_FALSE(BusyRetry::busy(makeError(statusError(kErrNoEnt), "read /x")));
  EXPECT_FALSE(BusyRetry::busy(Error{}));
  // The same number in another category is not the NFS status.
  EXPECT_FALSE(BusyRetry::busy(
      makeError(std::error_code(static_cast<int>(kErrDelay), std::generic_category()), "x")));
}

TEST(BusyRetry, ResendableReadsTheFailingOperationFromTheResultCount) {
  const Error grace = makeError(statusError(kErrGrace), "open /x");
  const Error delay = makeError(statusError(kErrDelay), "stat /x");
  // SEQUENCE, PUTFH, LOOKUP, OPEN (3), GETFH, GETATTR.
  EXPECT_TRUE(BusyRetry::resendable(grace, true, kErrGrace, 4, 3)) << "the OPEN was refused";
  EXPECT_TRUE(BusyRetry::resendable(delay, true, kErrDelay, 3, 3)) << "the LOOKUP before it was";
  EXPECT_FALSE(BusyRetry::resendable(delay, true, kErrDelay, 5, 3))
      << "GETFH after an OPEN that ran";
  EXPECT_FALSE(BusyRetry::resendable(delay, true, kErrDelay, 6, 3))
      << "GETATTR after an OPEN that ran";
  EXPECT_TRUE(BusyRetry::resendable(delay, true, kErrDelay, 6, CompoundEncoder::kAllIdempotent));
  // SEQUENCE itself answered: nothing ran, whatever the COMPOUND holds.
  EXPECT_TRUE(
      BusyRetry::resendable(makeError(statusError(kErrDelay), "SEQUENCE"), false, kNfs4Ok, 0, 1));
  EXPECT_FALSE(BusyRetry::resendable(makeError(statusError(kErrBadSession), "SEQUENCE"), false,
                                     kNfs4Ok, 0, 1));
  // Only the NFS4ERR_ answer itself: a reply that did not decode, an error
  // of the client, another status, or success are never resent.
  EXPECT_FALSE(
      BusyRetry::resendable(makeError(ClientErrc::kMalformedReply, "x"), true, kErrDelay, 2, 9));
  EXPECT_FALSE(BusyRetry::resendable(makeError(ClientErrc::kTimedOut, "x"), false, kNfs4Ok, 0, 9));
  EXPECT_FALSE(
      BusyRetry::resendable(makeError(statusError(kErrNoEnt), "x"), true, kErrNoEnt, 2, 9));
  EXPECT_FALSE(BusyRetry::resendable(Error{}, true, kNfs4Ok, 3, 9));
  EXPECT_FALSE(BusyRetry::resendable(delay, true, kErrGrace, 2, 9))
      << "the error is not the COMPOUND's status";
}

TEST(BusyRetry, PausesDoubleToTheCapAndTheLastEndsAtTheBudget) {
  const Clock::time_point t0{};
  BusyRetry r(3000ms, t0);
  std::vector<std::chrono::milliseconds> pauses;
  Clock::time_point now = t0;
  for (int i = 0; i < 100; ++i) {
    auto p = r.nextPause(now);
    if (!p) break;
    pauses.push_back(*p);
    now += *p;
  }
  // 100 + 200 + 400 + 800 + 1000 = 2500, then the 500 ms left.
  EXPECT_EQ(pauses,
            (std::vector<std::chrono::milliseconds>{100ms, 200ms, 400ms, 800ms, 1000ms, 500ms}));
  EXPECT_EQ(r.retries(), 6U);
  EXPECT_FALSE(r.nextPause(now));
  EXPECT_FALSE(r.nextPause(now + 1h));
}

TEST(BusyRetry, TimeSpentOutsideThePausesCountsAgainstTheBudget) {
  const Clock::time_point t0{};
  BusyRetry r(1000ms, t0);
  EXPECT_EQ(r.nextPause(t0 + 950ms), std::optional(50ms));
  EXPECT_FALSE(r.nextPause(t0 + 1000ms));
}

// The reconnect backoff: 0.1 s doubling to its cap (2 s), the last pause
// cut to the budget's end, and nothing once the budget is spent.
TEST(BusyRetry, ReconnectBackoffDoublesToItsCapWithinTheBudget) {
  const Clock::time_point t0{};
  BusyRetry r(5000ms, t0, 2000ms);
  Clock::time_point now = t0;
  std::vector<std::chrono::milliseconds> pauses;
  while (auto p = r.nextPause(now)) {
    pauses.push_back(*p);
    now += *p;
    ASSERT_LT(pauses.size(), 20U);
  }
  const std::vector<std::chrono::milliseconds> want{100ms, 200ms, 400ms, 800ms, 1600ms, 1900ms};
  EXPECT_EQ(pauses, want);
  EXPECT_EQ(now, t0 + 5000ms);
  // A cap below the first pause is the first pause.
  BusyRetry low(1000ms, t0, 10ms);
  EXPECT_EQ(low.nextPause(t0), std::optional(100ms));
  EXPECT_EQ(low.nextPause(t0 + 100ms), std::optional(100ms));
}

TEST(BusyRetry, ZeroBudgetNeverPauses) {
  const Clock::time_point t0{};
  BusyRetry r(0ms, t0);
  EXPECT_FALSE(r.nextPause(t0));
  EXPECT_EQ(r.retries(), 0U);
}

}  // namespace
}  // namespace nfsrdma::nfs4
