#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "bench/job/Verify.h"

namespace nfsrdma::bench {
namespace {

TEST(Verify, PatternChecksClean) {
  std::vector<std::uint8_t> buf(64 * 1024);
  fillPattern(buf, 42, 3, 1 << 20);
  VerifyStats s;
  EXPECT_EQ(checkPattern(buf, 42, 3, 1 << 20, s), 0U);
  EXPECT_EQ(s.unitsChecked, 16U);
  EXPECT_EQ(s.bytesChecked, buf.size());
  EXPECT_EQ(s.mismatches, 0U);
}

TEST(Verify, PatternIsIndependentOfTheBlockSizeThatWroteIt) {
  std::vector<std::uint8_t> big(1 << 20), small(4096);
  fillPattern(big, 1, 0, 0);
  fillPattern(small, 1, 0, 12 * 4096);
  EXPECT_EQ(std::memcmp(big.data() + 12 * 4096, small.data(), 4096), 0);
}

TEST(Verify, CorruptByteReportsItsOffset) {
  std::vector<std::uint8_t> buf(8 * 4096);
  fillPattern(buf, 9, 1, 4096 * 100);
  buf[3 * 4096 + 777] ^= 0x40;
  VerifyStats s;
  EXPECT_EQ(checkPattern(buf, 9, 1, 4096 * 100, s), 1U);
  ASSERT_EQ(s.first.size(), 1U);
  EXPECT_EQ(s.first[0].offset, 4096U * 103);
  EXPECT_EQ(s.first[0].firstBadByte, 4096U * 103 + 777);
  EXPECT_EQ(s.first[0].kind, "payload corrupt (checksum mismatch)");
}

TEST(Verify, MisplacedZeroAndForeignBlocksAreTold) {
  std::vector<std::uint8_t> buf(3 * 4096);
  fillPattern(std::span(buf).first(4096), 5, 2, 8192);  // unit 0 holds offset 8192's data
  std::memset(buf.data() + 4096, 0, 4096);              // unit 1 never written
  std::memset(buf.data() + 8192, 0xAB, 4096);           // unit 2 foreign
  VerifyStats s;
  EXPECT_EQ(checkPattern(buf, 5, 2, 0, s), 3U);
  ASSERT_EQ(s.first.size(), 3U);
  EXPECT_EQ(s.first[0].offset, 0U);
  EXPECT_NE(s.first[0].kind.find("misplaced block"), std::string::npos) << s.first[0].kind;
  EXPECT_NE(s.first[0].kind.find("offset 8192"), std::string::npos);
  EXPECT_NE(s.first[1].kind.find("zeros"), std::string::npos);
  EXPECT_NE(s.first[2].kind.find("foreign"), std::string::npos);
}

TEST(Verify, OtherSeedOrFileIsAMismatch) {
  std::vector<std::uint8_t> buf(4096);
  fillPattern(buf, 1, 0, 0);
  VerifyStats s;
  EXPECT_EQ(checkPattern(buf, 2, 0, 0, s), 1U);
  EXPECT_EQ(checkPattern(buf, 1, 1, 0, s), 1U);
}

// A --verify write run's units (its generation): any later reader accepts
// them by checksum and place; the run's own read-back accepts only them and
// calls the seed's pattern, or another run's data, a lost write.
TEST(Verify, GenerationUnitsTellALostWriteFromOldData) {
  std::vector<std::uint8_t> ours(2 * 4096), before(2 * 4096), other(2 * 4096);
  fillPattern(ours, 7, 1, 8192, 0xA1);
  fillPattern(before, 7, 1, 8192);
  fillPattern(other, 7, 1, 8192, 0xB2);
  EXPECT_NE(std::memcmp(ours.data(), before.data(), 4096), 0);
  VerifyStats later;
  EXPECT_EQ(checkPattern(ours, 7, 1, 8192, later), 0U);
  EXPECT_EQ(checkPattern(other, 7, 1, 8192, later), 0U);
  VerifyStats own;
  EXPECT_EQ(checkPattern(ours, 7, 1, 8192, own, 0xA1), 0U);

  VerifyStats lost;
  EXPECT_EQ(checkPattern(before, 7, 1, 8192, lost, 0xA1), 2U);
  ASSERT_EQ(lost.first.size(), 2U);
  EXPECT_EQ(lost.first[0].kind,
            "stale: intact data from before this run's write of it (the write was lost)");
  EXPECT_EQ(lost.first[0].offset, 8192U);
  VerifyStats another;
  EXPECT_EQ(checkPattern(other, 7, 1, 8192, another, 0xA1), 2U);

  // Still checked for what every unit is checked for.
  std::vector<std::uint8_t> flipped = ours;
  flipped[4096 + 300] ^= 0x10;
  VerifyStats corrupt;
  EXPECT_EQ(checkPattern(flipped, 7, 1, 8192, corrupt), 1U);
  ASSERT_EQ(corrupt.first.size(), 1U);
  EXPECT_EQ(corrupt.first[0].kind, "payload corrupt (checksum mismatch)");
  VerifyStats misplaced;
  EXPECT_EQ(checkPattern(ours, 7, 1, 0, misplaced), 2U);
  VerifyStats wrongSeed;
  EXPECT_EQ(checkPattern(ours, 8, 1, 8192, wrongSeed), 2U);
}

}  // namespace
}  // namespace nfsrdma::bench
