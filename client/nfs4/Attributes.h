// A file's attributes as the server returns them (fattr4, RFC 8881 section
// 5): the value type Client.h's stat(), fstat() and readdir() return. Plain
// data, apart from the codec (Compound.h decodes it), so the public API can
// show it without the COMPOUND machinery.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "client/nfs4/Nfs4Constants.h"

namespace nfsrdma::nfs4 {

class Bitmap {
 public:
  static constexpr std::size_t kWords = 3;
  Bitmap() = default;
  Bitmap(std::initializer_list<std::uint32_t> bits) {
    for (auto b : bits) set(b);
  }
  void set(std::uint32_t bit) {
    if (bit / 32 < kWords) words_[bit / 32] |= 1U << (bit % 32);
  }
  bool test(std::uint32_t bit) const {
    return bit / 32 < kWords && (words_[bit / 32] >> (bit % 32)) & 1U;
  }
  // Words up to the highest non-zero one, as sent on the wire.
  std::size_t usedWords() const {
    std::size_t n = kWords;
    while (n > 0 && words_[n - 1] == 0) --n;
    return n;
  }
  std::uint32_t word(std::size_t i) const { return words_[i]; }
  void setWord(std::size_t i, std::uint32_t v) { words_[i] = v; }
  bool empty() const { return usedWords() == 0; }

 private:
  std::array<std::uint32_t, kWords> words_{};
};

struct NfsTime {
  std::int64_t seconds = 0;
  std::uint32_t nseconds = 0;
};

// Decoded fattr4; 'present' says which fields the server returned.
struct Attributes {
  Bitmap present;
  FileType type = FileType::kNone;
  std::uint64_t change = 0;
  std::uint64_t size = 0;
  std::uint64_t fileId = 0;
  // The file system the file is on; with fileId it names one file on a server.
  std::uint64_t fsidMajor = 0;
  std::uint64_t fsidMinor = 0;
  std::uint64_t maxRead = 0;
  std::uint64_t maxWrite = 0;
  std::uint32_t leaseTime = 0;
  std::uint32_t mode = 0;
  std::uint32_t numLinks = 0;
  std::string owner;
  std::string ownerGroup;
  std::uint64_t spaceUsed = 0;
  NfsTime timeAccess;
  NfsTime timeMetadata;
  NfsTime timeModify;
};

}  // namespace nfsrdma::nfs4
