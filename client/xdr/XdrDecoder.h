// XDR (RFC 4506) decoder over a received message.
//
// Network input is untrusted: every read is bounds-checked and a failure is
// sticky (later reads return zeros / empty views), so decoders read a whole
// structure and check ok() once, instead of testing each field. Opaque data
// comes back as views into the message, never copied here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace nfsrdma::xdr {

class XdrDecoder {
 public:
  explicit XdrDecoder(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}

  std::uint32_t getU32() {
    const std::uint8_t* p = take(4);
    if (p == nullptr) return 0;
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
           std::uint32_t{p[3]};
  }
  std::int32_t getI32() { return static_cast<std::int32_t>(getU32()); }
  std::uint64_t getU64() {
    const std::uint64_t hi = getU32();
    return (hi << 32) | getU32();
  }
  std::int64_t getI64() { return static_cast<std::int64_t>(getU64()); }
  // XDR booleans are exactly 0 or 1; anything else is malformed.
  bool getBool() {
    const std::uint32_t v = getU32();
    if (v > 1) failed_ = true;
    return v == 1;
  }
  // Variable-length opaque<maxLen>: a view of its bytes (pad skipped).
  std::span<const std::uint8_t> getOpaque(std::size_t maxLen) {
    const std::uint32_t len = getU32();
    if (len > maxLen) {
      failed_ = true;
      return {};
    }
    return getFixedOpaque(len);
  }
  // Fixed-length opaque[len].
  std::span<const std::uint8_t> getFixedOpaque(std::size_t len) {
    const std::size_t padded = len + ((4 - (len & 3)) & 3);
    if (padded < len) {
      failed_ = true;
      return {};
    }
    const std::uint8_t* p = take(padded);
    if (p == nullptr) return {};
    return {p, len};
  }
  std::string_view getString(std::size_t maxLen) {
    auto b = getOpaque(maxLen);
    return {reinterpret_cast<const char*>(b.data()), b.size()};
  }
  void skip(std::size_t n) { (void)take(n); }

  // Payloads the transport placed directly into the caller's memory (RDMA
  // Write chunks) are absent from this stream; their lengths come in order.
  void setPlacedBulk(std::span<const std::uint32_t> lengths) { placed_ = lengths; }
  // The next directly placed payload's length, if the transport placed one.
  bool nextPlacedBulk(std::uint32_t& length) {
    if (placedNext_ >= placed_.size()) return false;
    length = placed_[placedNext_++];
    return true;
  }

  bool ok() const { return !failed_; }
  void fail() { failed_ = true; }
  std::size_t position() const { return pos_; }
  std::size_t remaining() const { return failed_ ? 0 : bytes_.size() - pos_; }
  std::span<const std::uint8_t> rest() const {
    return failed_ ? std::span<const std::uint8_t>{} : bytes_.subspan(pos_);
  }

 private:
  const std::uint8_t* take(std::size_t n) {
    if (failed_ || bytes_.size() - pos_ < n) {
      failed_ = true;
      return nullptr;
    }
    const std::uint8_t* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }

  std::span<const std::uint8_t> bytes_;
  std::size_t pos_ = 0;
  bool failed_ = false;
  std::span<const std::uint32_t> placed_;
  std::size_t placedNext_ = 0;
};

}  // namespace nfsrdma::xdr
