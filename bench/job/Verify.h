// Data pattern and integrity check of the file benchmark (the idea of fio's
// verify, our own format). Every 4 KiB unit of a bench file holds a 32-byte
// header and a payload that are pure functions of (seed, file id, offset):
//
//   magic "NFSRDMAV" | offset in file (u64) | file id (u32) | unit bytes (u32)
//   | seed (u64) | ... payload ... | the header's last 8 bytes: checksum
//
// so any writer (any engine, any block size, any order, any number of
// overwrites) leaves the same bytes, and any reader can check every byte it
// gets back without remembering what was written. The per-unit checksum
// tells a corrupted payload (checksum wrong) from a misplaced but intact
// block (checksum right, offset or file id wrong): the offset of every
// mismatch is reported, the first few with their kind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nfsrdma::bench {

inline constexpr std::uint32_t kVerifyUnit = 4096;

// Fills buf (a multiple of kVerifyUnit) with the pattern of file fileId at
// fileOffset (a multiple of kVerifyUnit). A --verify write run passes its
// generation (non-zero, its own): the units then say "NFSRDMAG", carry the
// generation in their first payload word and a payload of their own, so
// the read-back after the run can tell a block it wrote from one whose
// write was lost (the seed's pattern would be the same bytes as before).
// Other readers accept such units by checksum and place.
void fillPattern(std::span<std::uint8_t> buf, std::uint64_t seed, std::uint32_t fileId,
                 std::uint64_t fileOffset, std::uint64_t generation = 0);

// Write data of a run without --verify (fio's default is a buffer filled
// once, not per write): fillWriteBuffer fills buf once with units shaped like
// the pattern (the same incompressible payload, a valid checksum) but with a
// magic of their own, "NFSRDMAW"; stampWriteBuffer then rewrites only each
// unit's offset and file id before a write (32 of 4096 bytes), so no two
// units of the file set are equal and block dedup cannot flatter a target.
// salt (e.g. job and slot) makes the payload of each buffer its own. A
// --verify read checks such a unit by its checksum, offset and file id (not
// by the seed's pattern), so a file set written by either kind of run can be
// verified later.
void fillWriteBuffer(std::span<std::uint8_t> buf, std::uint64_t seed, std::uint64_t salt);
void stampWriteBuffer(std::span<std::uint8_t> buf, std::uint32_t fileId, std::uint64_t fileOffset);

struct VerifyMismatch {
  std::uint32_t fileId = 0;
  std::uint64_t offset = 0;        // of the 4 KiB unit in the file
  std::uint64_t firstBadByte = 0;  // offset in the file of the first differing byte (of a unit
                                   // written without --verify: the unit's, no reference to compare)
  std::string kind;  // "payload corrupt (checksum mismatch)", "misplaced block ...", ...
};

struct VerifyStats {
  std::uint64_t unitsChecked = 0;
  std::uint64_t bytesChecked = 0;
  std::uint64_t mismatches = 0;
  std::vector<VerifyMismatch> first;  // at most kMaxReported
  static constexpr std::size_t kMaxReported = 16;

  void merge(const VerifyStats& o);
};

// Checks buf, read from file fileId at fileOffset, against the pattern
// (any intact unit in its place of a run without --verify or of a --verify
// write run passes too); adds to stats. With a generation, only that write
// run's units pass: older intact data is reported as a lost write. Returns
// the number of mismatching units.
std::uint64_t checkPattern(std::span<const std::uint8_t> buf, std::uint64_t seed,
                           std::uint32_t fileId, std::uint64_t fileOffset, VerifyStats& stats,
                           std::uint64_t generation = 0);

}  // namespace nfsrdma::bench
