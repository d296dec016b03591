// The one data pattern of the benchmarks: a stream of 64-bit words, each a
// pure function of the stream's key and the word's index, so any part of any
// stream can be made, or checked, on its own, in any order, by any process
// (the property fio's verify relies on). Its users: the file benchmark's
// verify units (job/Verify.h) take their payload words from it, the anchor
// fills its test file with it, and the link benchmark fills and checks its
// messages with it (--verify).
//
// Not a general random number generator: a word costs one multiply and one
// xor, so a buffer fills at about memory speed. The key's mixing spreads
// every input bit over the word, and no word repeats within a stream (the
// index's multiplier is odd, so index -> index * step is a bijection): the
// data does not compress and no block of it repeats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace nfsrdma::bench {

class DataPattern {
 public:
  // splitmix64's finaliser: every input bit moves about half the output bits.
  static constexpr std::uint64_t mix(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
  }

  // The stream of one block: seed is the run's, stream what the data belongs
  // to (a file id, the link's messages), block where it is in that (a file
  // offset, a chunk). Within one seed, streams below 2^16 and blocks below
  // 2^48 give distinct keys: the stream is shifted into the block's top 16
  // bits (kept so, because file sets laid out by earlier runs must still
  // verify; Verify's header word holds the whole file id besides).
  static constexpr DataPattern of(std::uint64_t seed, std::uint32_t stream, std::uint64_t block) {
    return DataPattern(mix(seed ^ mix(block ^ (static_cast<std::uint64_t>(stream) << 48))));
  }

  constexpr std::uint64_t word(std::uint64_t index) const { return key_ ^ (index * kStep); }

  // Fills out with words firstWord, firstWord + 1, ... in this machine's
  // byte order; a size that is no multiple of 8 ends with the first bytes of
  // the next word.
  void fill(std::span<std::byte> out, std::uint64_t firstWord = 0) const;

  // Offset in in of the first byte that is not what fill(in, firstWord)
  // would have written, or nullopt when every byte is.
  std::optional<std::size_t> firstMismatch(std::span<const std::byte> in,
                                           std::uint64_t firstWord = 0) const;

 private:
  static constexpr std::uint64_t kStep = 0xD6E8FEB86659FD93ULL;  // odd: no word repeats

  explicit constexpr DataPattern(std::uint64_t key) : key_(key) {}

  std::uint64_t key_;
};

}  // namespace nfsrdma::bench
