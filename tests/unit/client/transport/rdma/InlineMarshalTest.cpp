// The inline part of an RPC-over-RDMA call: chunked payloads and their XDR
// pad leave the stream, everything else is copied in order.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "client/transport/rdma/InlineMarshal.h"

namespace nfsrdma::transport::rdma {
namespace {

TEST(InlineMarshal, CopiesEverySegmentWhenNothingIsChunked) {
  const std::array<std::uint8_t, 3> a{1, 2, 3};
  const std::array<std::uint8_t, 2> b{4, 5};
  const std::array<xdr::ConstBuffer, 2> segs{{{a.data(), a.size()}, {b.data(), b.size()}}};
  std::array<std::uint8_t, 16> out{};
  out[0] = 0xee;
  auto end = marshalInline(segs, {}, out, 1);
  ASSERT_TRUE(end);
  EXPECT_EQ(*end, 6U);
  EXPECT_EQ((std::vector<std::uint8_t>(out.begin(), out.begin() + 6)),
            (std::vector<std::uint8_t>{0xee, 1, 2, 3, 4, 5}));
}

TEST(InlineMarshal, DropsAChunkedPayloadAndThePadAfterIt) {
  // A WRITE: header words, 5 bytes of data (moved to a Read chunk), then the
  // 3-byte XDR pad at the start of the trailing segment, then more ops.
  const std::array<std::uint8_t, 4> head{0, 0, 0, 5};
  const std::array<std::uint8_t, 5> data{9, 9, 9, 9, 9};
  const std::array<std::uint8_t, 7> tail{0, 0, 0, 0xa, 0xb, 0xc, 0xd};
  const std::array<xdr::ConstBuffer, 3> segs{
      {{head.data(), head.size()}, {data.data(), data.size()}, {tail.data(), tail.size()}}};
  const std::array<xdr::BulkSegment, 1> chunked{{{data, 4, 3}}};
  std::array<std::uint8_t, 32> out{};
  auto end = marshalInline(segs, chunked, out, 0);
  ASSERT_TRUE(end);
  EXPECT_EQ((std::vector<std::uint8_t>(out.begin(), out.begin() + static_cast<long>(*end))),
            (std::vector<std::uint8_t>{0, 0, 0, 5, 0xa, 0xb, 0xc, 0xd}));
}

TEST(InlineMarshal, AnEqualPayloadElsewhereIsNotTakenForTheChunkedOne) {
  const std::array<std::uint8_t, 4> one{1, 1, 1, 1};
  const std::array<std::uint8_t, 4> two{1, 1, 1, 1};  // same bytes, other memory
  const std::array<xdr::ConstBuffer, 2> segs{{{one.data(), 4}, {two.data(), 4}}};
  const std::array<xdr::BulkSegment, 1> chunked{{{one, 0, 0}}};
  std::array<std::uint8_t, 8> out{};
  EXPECT_EQ(marshalInline(segs, chunked, out, 0), std::optional<std::size_t>(4));
}

TEST(InlineMarshal, RefusesWhatDoesNotFit) {
  const std::array<std::uint8_t, 8> a{};
  const std::array<xdr::ConstBuffer, 1> segs{{{a.data(), a.size()}}};
  std::array<std::uint8_t, 10> out{};
  EXPECT_FALSE(marshalInline(segs, {}, out, 3));
  EXPECT_EQ(marshalInline(segs, {}, out, 2), std::optional<std::size_t>(10));
}

}  // namespace
}  // namespace nfsrdma::transport::rdma
