// UnstableWrites: when fsync/close must COMMIT, and when a COMMIT reports
// the data lost, including WRITE replies that overtake a COMMIT on the wire.
#include <gtest/gtest.h>

#include "client/nfs4/UnstableWrites.h"

namespace nfsrdma::nfs4 {
namespace {

using Outcome = UnstableWrites::CommitOutcome;

Verifier verifier(std::uint8_t b) {
  Verifier v{};
  v.fill(b);
  return v;
}

TEST(UnstableWrites, NothingIsOwedBeforeAWriteOrAfterACoveringCommit) {
  UnstableWrites w;
  EXPECT_FALSE(w.owed());
  w.onWriteReply(verifier(1));
  w.onWriteReply(verifier(1));
  EXPECT_TRUE(w.owed());
  const auto ticket = w.beginCommit();
  EXPECT_EQ(w.endCommit(ticket, verifier(1)), Outcome::kDurable);
  EXPECT_FALSE(w.owed());
}

// A WRITE whose reply arrives while the COMMIT is on the wire may have run
// after it: close must still COMMIT, not report it durable.
TEST(UnstableWrites, AReplyThatOvertakesTheCommitStaysOwed) {
  UnstableWrites w;
  w.onWriteReply(verifier(1));
  const auto ticket = w.beginCommit();
  w.onWriteReply(verifier(1));  // the reply of a WRITE still in flight when COMMIT was sent
  EXPECT_EQ(w.endCommit(ticket, verifier(1)), Outcome::kDurable);
  EXPECT_TRUE(w.owed());
  // The next COMMIT covers it, and still checks its verifier.
  const auto second = w.beginCommit();
  EXPECT_EQ(w.endCommit(second, verifier(2)), Outcome::kLost);
  EXPECT_FALSE(w.owed());
}

TEST(UnstableWrites, AnotherVerifierAtCommitMeansLost) {
  UnstableWrites w;
  w.onWriteReply(verifier(1));
  EXPECT_EQ(w.endCommit(w.beginCommit(), verifier(2)), Outcome::kLost);
}

TEST(UnstableWrites, WritesThatSawTwoVerifiersAreLostWhateverTheCommitSays) {
  UnstableWrites w;
  w.onWriteReply(verifier(1));
  w.onWriteReply(verifier(2));  // the server restarted between them
  EXPECT_EQ(w.endCommit(w.beginCommit(), verifier(2)), Outcome::kLost);
}

// The loss is reported once: data written again after it starts a new
// baseline, and its fsync succeeds instead of failing forever.
TEST(UnstableWrites, AfterALossRewrittenDataCommitsCleanly) {
  UnstableWrites w;
  w.onWriteReply(verifier(1));
  ASSERT_EQ(w.endCommit(w.beginCommit(), verifier(2)), Outcome::kLost);
  EXPECT_FALSE(w.owed());
  w.onWriteReply(verifier(2));
  EXPECT_EQ(w.endCommit(w.beginCommit(), verifier(2)), Outcome::kDurable);
  EXPECT_FALSE(w.owed());
}

// A reply that overtakes a COMMIT which then finds the verifier changed was
// written under the old verifier too: the next COMMIT, which sees only the
// new one, must not report it durable.
TEST(UnstableWrites, AReplyThatOvertakesALosingCommitIsLostToo) {
  UnstableWrites w;
  w.onWriteReply(verifier(1));
  const auto ticket = w.beginCommit();
  w.onWriteReply(verifier(1));
  EXPECT_EQ(w.endCommit(ticket, verifier(2)), Outcome::kLost);
  ASSERT_TRUE(w.owed());
  EXPECT_EQ(w.endCommit(w.beginCommit(), verifier(2)), Outcome::kLost);
  EXPECT_FALSE(w.owed());
  // Rewritten under the new verifier, it commits cleanly.
  w.onWriteReply(verifier(2));
  EXPECT_EQ(w.endCommit(w.beginCommit(), verifier(2)), Outcome::kDurable);
}

// A COMMIT with nothing written (fsync of a clean file) has nothing to lose.
TEST(UnstableWrites, CommitWithNothingWrittenIsDurable) {
  UnstableWrites w;
  EXPECT_EQ(w.endCommit(w.beginCommit(), verifier(7)), Outcome::kDurable);
  EXPECT_FALSE(w.owed());
}

}  // namespace
}  // namespace nfsrdma::nfs4
