#include "bench/job/Verify.h"

#include <algorithm>
#include <cstring>

#include "bench/pattern/DataPattern.h"

namespace nfsrdma::bench {
namespace {

constexpr std::uint64_t kMagic = 0x5652444d5253464eULL;  // "NFSRDMAV" little-endian
constexpr std::uint64_t kUnverifiedMagic =
    0x5752444d5253464eULL;  // "NFSRDMAW": written without --verify
constexpr std::uint64_t kGenerationMagic =
    0x4752444d5253464eULL;                                 // "NFSRDMAG": a --verify write run's
constexpr std::size_t kHeaderWords = 4;                    // magic, offset, id|len, seed
constexpr std::size_t kGenerationWord = kHeaderWords + 1;  // first payload word: under the checksum
constexpr std::size_t kWords = kVerifyUnit / 8;

// Checksum of the payload words [kHeaderWords + 1, kWords).
std::uint64_t checksum(const std::uint64_t* w) {
  std::uint64_t a = 0x84222325CBF29CE4ULL, b = 0;
  for (std::size_t i = kHeaderWords + 1; i < kWords; ++i) {
    a = (a ^ w[i]) * 0x100000001B3ULL;
    b += w[i];
  }
  return DataPattern::mix(a ^ b);
}

// generation 0: the seed's pattern; otherwise a unit of that write run,
// whose payload (and so checksum) no other run's matches. The payload is
// the benchmarks' one pattern, keyed by the unit's place.
void fillUnit(std::uint64_t* w, std::uint64_t seed, std::uint32_t fileId, std::uint64_t offset,
              std::uint64_t generation = 0) {
  const DataPattern payload =
      DataPattern::of(generation == 0 ? seed : seed ^ DataPattern::mix(generation), fileId, offset);
  w[0] = generation == 0 ? kMagic : kGenerationMagic;
  w[1] = offset;
  w[2] = (static_cast<std::uint64_t>(kVerifyUnit) << 32) | fileId;
  w[3] = seed;
  for (std::size_t i = kHeaderWords + 1; i < kWords; ++i) w[i] = payload.word(i);
  if (generation != 0) w[kGenerationWord] = generation;
  w[kHeaderWords] = checksum(w);
}

// A unit that is intact (checksum) and in its place, of any writer: the
// seed's pattern, a run without --verify or a --verify write run.
bool intactInPlace(const std::uint64_t* got, std::uint64_t seed, std::uint32_t fileId,
                   std::uint64_t offset) {
  return (got[0] == kMagic || got[0] == kUnverifiedMagic || got[0] == kGenerationMagic) &&
         checksum(got) == got[kHeaderWords] && got[1] == offset &&
         got[2] == ((static_cast<std::uint64_t>(kVerifyUnit) << 32) | fileId) && got[3] == seed;
}

}  // namespace

void VerifyStats::merge(const VerifyStats& o) {
  unitsChecked += o.unitsChecked;
  bytesChecked += o.bytesChecked;
  mismatches += o.mismatches;
  for (const auto& m : o.first) {
    if (first.size() < kMaxReported) first.push_back(m);
  }
}

void fillPattern(std::span<std::uint8_t> buf, std::uint64_t seed, std::uint32_t fileId,
                 std::uint64_t fileOffset, std::uint64_t generation) {
  std::uint64_t unit[kWords];
  for (std::size_t pos = 0; pos + kVerifyUnit <= buf.size(); pos += kVerifyUnit) {
    fillUnit(unit, seed, fileId, fileOffset + pos, generation);
    std::memcpy(buf.data() + pos, unit, kVerifyUnit);
  }
}

void fillWriteBuffer(std::span<std::uint8_t> buf, std::uint64_t seed, std::uint64_t salt) {
  // The payload of a pattern unit of a file no run uses (id 0xFFFFFFFF) at
  // an offset far beyond any file: different from every real unit's.
  std::uint64_t unit[kWords];
  for (std::size_t pos = 0; pos + kVerifyUnit <= buf.size(); pos += kVerifyUnit) {
    fillUnit(unit, seed, 0xFFFFFFFFU, (salt << 40) + pos);
    unit[0] = kUnverifiedMagic;
    std::memcpy(buf.data() + pos, unit, kVerifyUnit);
  }
}

void stampWriteBuffer(std::span<std::uint8_t> buf, std::uint32_t fileId, std::uint64_t fileOffset) {
  // Header words 1 and 2 only: the checksum covers the payload, which stays.
  for (std::size_t pos = 0; pos + kVerifyUnit <= buf.size(); pos += kVerifyUnit) {
    const std::uint64_t words[2] = {fileOffset + pos,
                                    (static_cast<std::uint64_t>(kVerifyUnit) << 32) | fileId};
    std::memcpy(buf.data() + pos + 8, words, sizeof words);
  }
}

std::uint64_t checkPattern(std::span<const std::uint8_t> buf, std::uint64_t seed,
                           std::uint32_t fileId, std::uint64_t fileOffset, VerifyStats& stats,
                           std::uint64_t generation) {
  std::uint64_t bad = 0;
  std::uint64_t expected[kWords];
  std::uint64_t got[kWords];
  for (std::size_t pos = 0; pos < buf.size(); pos += kVerifyUnit) {
    const std::size_t n = std::min<std::size_t>(kVerifyUnit, buf.size() - pos);
    const std::uint64_t off = fileOffset + pos;
    ++stats.unitsChecked;
    stats.bytesChecked += n;
    fillUnit(expected, seed, fileId, off, generation);
    if (std::memcmp(buf.data() + pos, expected, n) == 0) continue;
    if (n == kVerifyUnit) {
      std::memcpy(got, buf.data() + pos, kVerifyUnit);
      // A unit another run wrote carries no pattern this reader can know
      // but has its own checksum and place: intact and where it belongs, it
      // passes, unless this run's own write of it is what is expected.
      if (generation == 0 && got[0] != kMagic && intactInPlace(got, seed, fileId, off)) continue;
    }
    ++bad;
    ++stats.mismatches;
    if (stats.first.size() >= VerifyStats::kMaxReported) continue;
    VerifyMismatch m;
    m.fileId = fileId;
    m.offset = off;
    const auto* e = reinterpret_cast<const std::uint8_t*>(expected);
    std::size_t i = 0;
    while (i < n && buf[pos + i] == e[i]) ++i;
    // A unit another run wrote has no reference bytes to compare with here:
    // its first bad byte is not known, only its unit.
    const bool noReference = n == kVerifyUnit && generation == 0 &&
                             (got[0] == kUnverifiedMagic || got[0] == kGenerationMagic);
    m.firstBadByte = noReference ? off : off + i;
    if (n < kVerifyUnit) {
      m.kind = "short unit differs from the pattern";
    } else {
      if (generation != 0 && intactInPlace(got, seed, fileId, off)) {
        m.kind = "stale: intact data from before this run's write of it (the write was lost)";
      } else if (got[0] != kMagic && got[0] != kUnverifiedMagic && got[0] != kGenerationMagic) {
        m.kind = std::all_of(got, got + kWords, [](std::uint64_t w) { return w == 0; })
                     ? "zeros: block never written or lost"
                     : "no pattern header: foreign data";
      } else if (checksum(got) != got[kHeaderWords]) {
        m.kind = "payload corrupt (checksum mismatch)";
      } else if (got[1] != off || (got[2] & 0xFFFFFFFFULL) != fileId) {
        m.kind = "misplaced block: intact data of file " + std::to_string(got[2] & 0xFFFFFFFFULL) +
                 " offset " + std::to_string(got[1]);
      } else if (got[3] != seed) {
        m.kind = "written with seed " + std::to_string(got[3]);
      } else {
        m.kind = "differs from the pattern";
      }
    }
    stats.first.push_back(std::move(m));
  }
  return bad;
}

}  // namespace nfsrdma::bench
