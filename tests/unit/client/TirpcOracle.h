// libtirpc as the reference XDR encoder for the codec tests: the same values
// encoded by xdrmem + xdr_* must give the same bytes as our XdrEncoder.
#pragma once

#include <gtest/gtest.h>
#include <rpc/rpc.h>

#include <array>
#include <cstdint>
#include <vector>

#include "client/xdr/XdrEncoder.h"

namespace nfsrdma::testing {

using Bytes = std::vector<std::uint8_t>;

// Runs encode(XDR*) on a libtirpc memory stream; the bytes it wrote.
template <class Encode>
Bytes tirpcEncode(Encode&& encode) {
  Bytes buf(8192);
  XDR x;
  xdrmem_create(&x, reinterpret_cast<char*>(buf.data()), static_cast<u_int>(buf.size()),
                XDR_ENCODE);
  const bool ok = encode(&x);
  EXPECT_TRUE(ok) << "libtirpc failed to encode";
  buf.resize(xdr_getpos(&x));
  xdr_destroy(&x);
  return buf;
}

// The whole XDR stream of an encoder: its segments, concatenated in order.
inline Bytes flatten(const xdr::XdrEncoder& enc) {
  std::array<xdr::ConstBuffer, xdr::XdrEncoder::kMaxSegments> segs{};
  const std::size_t n = enc.segments(segs);
  Bytes out;
  for (std::size_t i = 0; i < n; ++i)
    out.insert(out.end(), segs[i].data, segs[i].data + segs[i].size);
  return out;
}

// Runs encode(XdrEncoder&) over fresh storage; the flattened stream.
template <class Encode>
Bytes ourEncode(Encode&& encode) {
  std::array<std::uint8_t, 8192> storage{};
  xdr::XdrEncoder enc(storage);
  encode(enc);
  EXPECT_FALSE(enc.overflowed());
  return flatten(enc);
}

inline Bytes pattern(std::size_t n, std::uint8_t first = 0xa0) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(first + i);
  return b;
}

}  // namespace nfsrdma::testing
