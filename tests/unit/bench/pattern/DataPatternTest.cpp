#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "bench/pattern/DataPattern.h"

namespace nfsrdma::bench {
namespace {

std::vector<std::byte> filled(const DataPattern& p, std::size_t bytes,
                              std::uint64_t firstWord = 0) {
  std::vector<std::byte> out(bytes);
  p.fill(out, firstWord);
  return out;
}

TEST(DataPattern, TheSameBlockGivesTheSameBytesEveryTime) {
  EXPECT_EQ(filled(DataPattern::of(42, 3, 1 << 20), 4096),
            filled(DataPattern::of(42, 3, 1 << 20), 4096));
  static_assert(DataPattern::of(1, 2, 3).word(4) == DataPattern::of(1, 2, 3).word(4));
}

// Any part of a stream can be made on its own: words 8.. of a block are what
// a fill from word 8 makes, whatever was filled before.
TEST(DataPattern, APartOfTheStreamIsMadeWithoutTheRest) {
  const DataPattern p = DataPattern::of(7, 1, 4096);
  const std::vector<std::byte> whole = filled(p, 4096);
  const std::vector<std::byte> tail = filled(p, 4096 - 64, 8);
  EXPECT_EQ(std::memcmp(whole.data() + 64, tail.data(), tail.size()), 0);
  std::uint64_t third = 0;
  std::memcpy(&third, whole.data() + 16, 8);
  EXPECT_EQ(third, p.word(2));
}

// A size that is no multiple of a word ends with the next word's first bytes.
TEST(DataPattern, AShortTailIsTheStartOfTheNextWord) {
  const DataPattern p = DataPattern::of(7, 0, 0);
  const std::vector<std::byte> whole = filled(p, 24);
  const std::vector<std::byte> cut = filled(p, 19);
  EXPECT_EQ(std::memcmp(whole.data(), cut.data(), cut.size()), 0);
  EXPECT_EQ(p.firstMismatch(cut), std::nullopt);
}

TEST(DataPattern, DistinctBlocksStreamsAndSeedsDiffer) {
  std::set<std::vector<std::byte>> blocks;
  for (std::uint64_t seed : {0ULL, 1ULL}) {
    for (std::uint32_t stream : {0U, 1U, 0xFFFFFFFFU}) {
      for (std::uint64_t block : {0ULL, 4096ULL, 8192ULL, 1ULL << 40}) {
        blocks.insert(filled(DataPattern::of(seed, stream, block), 4096));
      }
    }
  }
  EXPECT_EQ(blocks.size(), 2U * 3 * 4);
}

// No word repeats within a block, and the bytes are spread: not a zero page,
// nothing a compressor or block dedup could shrink.
TEST(DataPattern, NoWordRepeatsWithinABlock) {
  const DataPattern p = DataPattern::of(42, 0, 0);
  std::set<std::uint64_t> words;
  for (std::uint64_t i = 0; i < (1U << 17); ++i) words.insert(p.word(i));  // 1 MiB of words
  EXPECT_EQ(words.size(), 1U << 17);
  const std::vector<std::byte> b = filled(p, 1 << 20);
  std::vector<std::size_t> count(256);
  for (std::byte x : b) ++count[static_cast<std::size_t>(x)];
  for (std::size_t v = 0; v < 256; ++v) {
    EXPECT_GT(count[v], b.size() / 256 / 2) << "byte value " << v << " is rare";
    EXPECT_LT(count[v], b.size() / 256 * 2) << "byte value " << v << " is common";
  }
}

TEST(DataPattern, TheCheckerFindsAFlippedByteAtItsOffset) {
  const DataPattern p = DataPattern::of(9, 2, 12288);
  std::vector<std::byte> b = filled(p, 4099);
  EXPECT_EQ(p.firstMismatch(b), std::nullopt);
  for (std::size_t at : {std::size_t{0}, std::size_t{777}, std::size_t{4098}}) {
    std::vector<std::byte> bad = b;
    bad[at] ^= std::byte{0x40};
    EXPECT_EQ(p.firstMismatch(bad), at);
  }
  // Another block's data, or this block's from another word, is not this.
  EXPECT_EQ(DataPattern::of(9, 2, 16384).firstMismatch(b), 0U);
  EXPECT_EQ(p.firstMismatch(std::span(b).subspan(8), 0), 0U);
  EXPECT_EQ(p.firstMismatch(std::span(b).subspan(8), 1), std::nullopt);
}

}  // namespace
}  // namespace nfsrdma::bench
