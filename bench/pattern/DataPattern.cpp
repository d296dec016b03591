#include "bench/pattern/DataPattern.h"

#include <algorithm>
#include <cstring>

namespace nfsrdma::bench {

void DataPattern::fill(std::span<std::byte> out, std::uint64_t firstWord) const {
  std::size_t pos = 0;
  std::uint64_t index = firstWord;
  for (; pos + 8 <= out.size(); pos += 8, ++index) {
    const std::uint64_t w = word(index);
    std::memcpy(out.data() + pos, &w, 8);
  }
  if (pos < out.size()) {
    const std::uint64_t w = word(index);
    std::memcpy(out.data() + pos, &w, out.size() - pos);
  }
}

std::optional<std::size_t> DataPattern::firstMismatch(std::span<const std::byte> in,
                                                      std::uint64_t firstWord) const {
  std::uint64_t index = firstWord;
  for (std::size_t pos = 0; pos < in.size(); pos += 8, ++index) {
    const std::uint64_t w = word(index);
    const std::size_t n = std::min<std::size_t>(8, in.size() - pos);
    if (std::memcmp(in.data() + pos, &w, n) == 0) continue;
    const auto* expected = reinterpret_cast<const std::byte*>(&w);
    std::size_t i = 0;
    while (in[pos + i] == expected[i]) ++i;
    return pos + i;
  }
  return std::nullopt;
}

}  // namespace nfsrdma::bench
