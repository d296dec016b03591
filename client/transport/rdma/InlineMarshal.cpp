#include "client/transport/rdma/InlineMarshal.h"

#include <algorithm>
#include <cstring>

namespace nfsrdma::transport::rdma {
namespace {

// The chunked payload this segment is, if any: its pad then follows.
const xdr::BulkSegment* chunkedAs(const xdr::ConstBuffer& s,
                                  std::span<const xdr::BulkSegment> chunked) {
  const xdr::BulkSegment* found = nullptr;
  for (const auto& b : chunked) {
    if (b.payload.data() == s.data && b.payload.size() == s.size) found = &b;
  }
  return found;
}

}  // namespace

std::optional<std::size_t> marshalInline(std::span<const xdr::ConstBuffer> segments,
                                         std::span<const xdr::BulkSegment> chunked,
                                         std::span<std::uint8_t> out, std::size_t at) {
  std::size_t skipPad = 0;
  for (const auto& s : segments) {
    if (const xdr::BulkSegment* b = chunkedAs(s, chunked)) {
      skipPad = b->padBytes;
      continue;
    }
    const std::size_t drop = std::min(skipPad, s.size);
    const std::size_t size = s.size - drop;
    skipPad = 0;
    if (at > out.size() || size > out.size() - at) return std::nullopt;
    if (size > 0) std::memcpy(out.data() + at, s.data + drop, size);
    at += size;
  }
  return at;
}

}  // namespace nfsrdma::transport::rdma
