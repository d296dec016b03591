#include "client/xdr/XdrEncoder.h"

#include <cstring>
#include <limits>

namespace nfsrdma::xdr {

std::uint8_t* XdrEncoder::claim(std::size_t n) {
  if (overflow_ || storage_.size() - used_ < n) {
    overflow_ = true;
    return nullptr;
  }
  std::uint8_t* p = storage_.data() + used_;
  used_ += n;
  return p;
}

void XdrEncoder::putU32(std::uint32_t v) {
  if (std::uint8_t* p = claim(4)) {
    p[0] = static_cast<std::uint8_t>(v >> 24);
    p[1] = static_cast<std::uint8_t>(v >> 16);
    p[2] = static_cast<std::uint8_t>(v >> 8);
    p[3] = static_cast<std::uint8_t>(v);
  }
}

void XdrEncoder::putU64(std::uint64_t v) {
  putU32(static_cast<std::uint32_t>(v >> 32));
  putU32(static_cast<std::uint32_t>(v));
}

void XdrEncoder::putFixedOpaque(std::span<const std::uint8_t> bytes) {
  const std::size_t pad = xdrPad(bytes.size());
  if (std::uint8_t* p = claim(bytes.size() + pad)) {
    if (!bytes.empty()) std::memcpy(p, bytes.data(), bytes.size());
    std::memset(p + bytes.size(), 0, pad);
  }
}

void XdrEncoder::putOpaque(std::span<const std::uint8_t> bytes) {
  if (bytes.size() > std::numeric_limits<std::uint32_t>::max()) {
    overflow_ = true;
    return;
  }
  putU32(static_cast<std::uint32_t>(bytes.size()));
  putFixedOpaque(bytes);
}

void XdrEncoder::putString(std::string_view s) {
  putOpaque({reinterpret_cast<const std::uint8_t*>(s.data()), s.size()});
}

void XdrEncoder::putBulk(std::span<const std::uint8_t> payload) {
  if (bulkCount_ == kMaxBulk || payload.size() > std::numeric_limits<std::uint32_t>::max()) {
    overflow_ = true;
    return;
  }
  putU32(static_cast<std::uint32_t>(payload.size()));
  if (overflow_) return;
  const std::size_t pad = xdrPad(payload.size());
  bulk_[bulkCount_] = BulkSegment{payload, used_ + bulkBytes_, pad};
  bulkHeadOffset_[bulkCount_] = used_;
  ++bulkCount_;
  bulkBytes_ += payload.size();
  // The pad stays in the head: it follows the payload in the stream.
  if (std::uint8_t* p = claim(pad)) std::memset(p, 0, pad);
}

std::size_t XdrEncoder::reserveU32() {
  const std::size_t at = used_;
  return claim(4) != nullptr ? at : std::numeric_limits<std::size_t>::max();
}

void XdrEncoder::patchU32(std::size_t headOffset, std::uint32_t v) {
  if (headOffset > used_ || used_ - headOffset < 4) {
    overflow_ = true;
    return;
  }
  std::uint8_t* p = storage_.data() + headOffset;
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
}

std::size_t XdrEncoder::segments(std::array<ConstBuffer, kMaxSegments>& out) const {
  std::size_t n = 0;
  std::size_t headFrom = 0;
  for (std::size_t i = 0; i < bulkCount_; ++i) {
    const std::size_t split = bulkHeadOffset_[i];
    if (split > headFrom) out[n++] = {storage_.data() + headFrom, split - headFrom};
    if (!bulk_[i].payload.empty()) out[n++] = {bulk_[i].payload.data(), bulk_[i].payload.size()};
    headFrom = split;
  }
  if (used_ > headFrom) out[n++] = {storage_.data() + headFrom, used_ - headFrom};
  return n;
}

}  // namespace nfsrdma::xdr
