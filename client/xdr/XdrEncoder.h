// XDR (RFC 4506) encoder over caller-provided storage.
//
// Why not one flat buffer: an NFS WRITE carries up to megabytes of payload that
// must not be copied into the header buffer. putBulk() records the payload as
// a separate segment; segments() then yields head / payload / tail pieces
// (an iovec list) that TCP hands to writev and the RDMA transport turns into
// Read chunks at the recorded XDR position. The encoder is pure and bounded:
// writing past the storage sets a sticky overflow flag instead of growing.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace nfsrdma::xdr {

// A read-only piece of an encoded message.
struct ConstBuffer {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
};

// A payload kept out of the header buffer, located in the XDR stream.
struct BulkSegment {
  std::span<const std::uint8_t> payload;
  std::size_t xdrPosition = 0;  // offset in the XDR stream where the payload starts
  std::size_t padBytes = 0;     // XDR roundup that follows the payload in the stream
};

class XdrEncoder {
 public:
  static constexpr std::size_t kMaxBulk = 4;
  // Largest possible number of segments: each bulk splits the head once.
  static constexpr std::size_t kMaxSegments = 2 * kMaxBulk + 1;

  explicit XdrEncoder(std::span<std::uint8_t> storage) : storage_(storage) {}

  void putU32(std::uint32_t v);
  void putI32(std::int32_t v) { putU32(static_cast<std::uint32_t>(v)); }
  void putU64(std::uint64_t v);
  void putI64(std::int64_t v) { putU64(static_cast<std::uint64_t>(v)); }
  void putBool(bool v) { putU32(v ? 1U : 0U); }
  // Variable-length opaque<>: length, bytes, zero pad to a multiple of 4.
  void putOpaque(std::span<const std::uint8_t> bytes);
  // Fixed-length opaque[n]: bytes and pad, no length word.
  void putFixedOpaque(std::span<const std::uint8_t> bytes);
  void putString(std::string_view s);
  // Variable-length opaque whose bytes stay in the caller's memory (which
  // must outlive the use of segments()). Fails (overflow) beyond kMaxBulk.
  void putBulk(std::span<const std::uint8_t> payload);

  // Reserves a 4-byte word to be filled later (e.g. a COMPOUND's op count).
  // Returns its offset in the head buffer, or SIZE_MAX on overflow.
  std::size_t reserveU32();
  void patchU32(std::size_t headOffset, std::uint32_t v);

  bool overflowed() const { return overflow_; }
  std::size_t headSize() const { return used_; }
  // Length of the whole XDR stream, bulk payloads included.
  std::size_t streamSize() const { return used_ + bulkBytes_; }
  std::span<const BulkSegment> bulk() const { return {bulk_.data(), bulkCount_}; }
  std::span<const std::uint8_t> head() const { return storage_.first(used_); }

  // The stream as pieces in order; returns how many were written to out.
  std::size_t segments(std::array<ConstBuffer, kMaxSegments>& out) const;

 private:
  std::uint8_t* claim(std::size_t n);

  std::span<std::uint8_t> storage_;
  std::size_t used_ = 0;
  bool overflow_ = false;
  std::array<BulkSegment, kMaxBulk> bulk_{};
  std::array<std::size_t, kMaxBulk> bulkHeadOffset_{};  // head offset where each bulk is spliced in
  std::size_t bulkCount_ = 0;
  std::size_t bulkBytes_ = 0;
};

// Bytes of zero padding after n bytes of opaque data.
constexpr std::size_t xdrPad(std::size_t n) {
  return (4 - (n & 3)) & 3;
}

}  // namespace nfsrdma::xdr
