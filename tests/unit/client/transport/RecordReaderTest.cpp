// RecordReader, fed bytes with no socket: record marking (RFC 5531 section
// 11), fragments, limits, direct placement and its fallbacks, abandon.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "client/transport/RecordReader.h"

namespace nfsrdma::transport {
namespace {

using Bytes = std::vector<std::uint8_t>;

void putBe32(Bytes& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(v >> shift));
}

Bytes fragment(const Bytes& body, bool last) {
  Bytes out;
  putBe32(out, (last ? 0x80000000U : 0U) | static_cast<std::uint32_t>(body.size()));
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

// A READ reply as direct placement expects it: XID, some header words, the
// data's length word, the data, its XDR pad.
Bytes readReply(std::uint32_t xid, std::uint32_t length, std::size_t dataBytes) {
  Bytes body;
  putBe32(body, xid);
  putBe32(body, 1);  // stands for the rest of the reply header
  putBe32(body, length);
  for (std::size_t i = 0; i < dataBytes; ++i) body.push_back(static_cast<std::uint8_t>(i * 13 + 1));
  body.resize(body.size() + (4 - dataBytes % 4) % 4, 0);
  return fragment(body, true);
}

struct Collecting final : RecordSink {
  void onRecord(std::span<const std::uint8_t> r, std::span<const std::uint32_t> p) override {
    records.emplace_back(r.begin(), r.end());
    placed.push_back(p.empty() ? 0 : p[0]);
  }
  std::vector<Bytes> records;
  std::vector<std::uint32_t> placed;
};

TEST(RecordReader, DeliversRecordsSplitAtEveryByte) {
  Bytes stream = fragment({1, 2, 3, 4, 5}, true);
  const Bytes second = fragment({6, 7, 8, 9}, true);
  stream.insert(stream.end(), second.begin(), second.end());
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    RecordReader r("peer");
    Collecting sink;
    ASSERT_FALSE(r.feed({stream.data(), cut}, sink));
    ASSERT_FALSE(r.feed({stream.data() + cut, stream.size() - cut}, sink));
    ASSERT_EQ(sink.records.size(), 2U) << "cut at " << cut;
    EXPECT_EQ(sink.records[0], (Bytes{1, 2, 3, 4, 5}));
    EXPECT_EQ(sink.records[1], (Bytes{6, 7, 8, 9}));
  }
}

// A reader that starts with the smallest buffer (as the fuzz harness's
// does) takes records larger than it, split anywhere, and hands up the same
// bytes: larger records go to buffers of their own.
TEST(RecordReader, AReaderStartingSmallDeliversLargerRecordsSplitAnywhere) {
  Bytes big(300);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i * 7);
  Bytes stream = fragment(big, true);
  const Bytes second = fragment({6, 7, 8, 9}, true);
  stream.insert(stream.end(), second.begin(), second.end());
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    RecordReader r("peer", 64);
    Collecting sink;
    ASSERT_FALSE(r.feed({stream.data(), cut}, sink));
    ASSERT_FALSE(r.feed({stream.data() + cut, stream.size() - cut}, sink));
    ASSERT_EQ(sink.records.size(), 2U) << "cut at " << cut;
    EXPECT_EQ(sink.records[0], big) << "cut at " << cut;
    EXPECT_EQ(sink.records[1], (Bytes{6, 7, 8, 9}));
  }
}

TEST(RecordReader, JoinsFragmentsIntoOneRecord) {
  Bytes stream = fragment({1, 2}, false);
  const Bytes tail = fragment({3}, true);
  stream.insert(stream.end(), tail.begin(), tail.end());
  RecordReader r("peer");
  Collecting sink;
  ASSERT_FALSE(r.feed(stream, sink));
  ASSERT_EQ(sink.records.size(), 1U);
  EXPECT_EQ(sink.records[0], (Bytes{1, 2, 3}));
}

TEST(RecordReader, RefusesAFragmentOverTheNegotiatedMaximum) {
  RecordReader r("tcp server:2049");
  r.setMaxIncoming(1024);
  Bytes stream;
  putBe32(stream, 0x80000000U | 1025U);
  Collecting sink;
  const Error e = r.feed(stream, sink);
  ASSERT_TRUE(e);
  EXPECT_EQ(e.code, make_error_code(ClientErrc::kRecordTooLarge));
  EXPECT_NE(e.message().find("tcp server:2049: record fragment of 1025 bytes exceeds the "
                             "negotiated maximum of 1024"),
            std::string::npos)
      << e.message();
  EXPECT_TRUE(sink.records.empty());
}

TEST(RecordReader, LargeRecordArrivesInItsOwnBuffer) {
  Bytes body(300 * 1024);
  std::iota(body.begin(), body.end(), std::uint8_t{0});
  const Bytes stream = fragment(body, true);
  RecordReader r("peer");
  Collecting sink;
  for (std::size_t off = 0; off < stream.size(); off += 10000) {
    ASSERT_FALSE(
        r.feed({stream.data() + off, std::min<std::size_t>(10000, stream.size() - off)}, sink));
    if (off + 10000 < stream.size()) {
      EXPECT_EQ(sink.records.size(), 0U);
    }
  }
  ASSERT_EQ(sink.records.size(), 1U);
  EXPECT_EQ(sink.records[0], body);
  EXPECT_FALSE(r.inLargeRecord());
}

TEST(RecordReader, PlacesReadDataInTheCallersBuffer) {
  Bytes dst(20000, 0);
  const Bytes stream = readReply(7, 20000, 20000);
  RecordReader r("peer");
  r.addPlacement(7, dst);
  Collecting sink;
  ASSERT_FALSE(r.feed(stream, sink));
  ASSERT_EQ(sink.records.size(), 1U);
  EXPECT_EQ(sink.placed[0], 20000U);
  EXPECT_EQ(sink.records[0].size(), 12U);  // XID, header word, length word
  EXPECT_EQ(Bytes(dst.begin(), dst.end()), Bytes(stream.begin() + 16, stream.begin() + 16 + 20000));
  EXPECT_EQ(r.placedReplies(), 1U);
  EXPECT_TRUE(r.takePlacement(7).empty());  // the registration ended with its reply
}

TEST(RecordReader, AShorterReplyIsDeliveredWholeInstead) {
  Bytes dst(20000, 0);
  const Bytes stream = readReply(7, 19000, 20000);  // its length word says less
  RecordReader r("peer");
  r.addPlacement(7, dst);
  Collecting sink;
  ASSERT_FALSE(r.feed(stream, sink));
  ASSERT_EQ(sink.records.size(), 1U);
  EXPECT_EQ(sink.placed[0], 0U);
  EXPECT_EQ(sink.records[0], Bytes(stream.begin() + 4, stream.end()));
  EXPECT_EQ(r.placementFallbacks(), 1U);
}

TEST(RecordReader, AbandonedCallsBufferIsNeverWrittenAgain) {
  Bytes dst(20000, 0);
  const Bytes stream = readReply(9, 20000, 20000);
  RecordReader r("peer");
  r.addPlacement(9, dst);
  Collecting sink;
  ASSERT_FALSE(r.feed({stream.data(), 600}, sink));  // placement has begun
  ASSERT_TRUE(r.inLargeRecord());
  const Bytes before = dst;
  r.abandon(9);
  ASSERT_FALSE(r.feed({stream.data() + 600, stream.size() - 600}, sink));
  EXPECT_EQ(dst, before);
  ASSERT_EQ(sink.records.size(), 1U);  // the reply still goes up, for the RPC layer to drop
}

TEST(RecordReader, EndOfStreamSaysHowMuchOfARecordArrived) {
  RecordReader r("tcp server:2049");
  Collecting sink;
  EXPECT_EQ(r.endOfStream().message().find("closed in the middle"), std::string::npos);
  const Bytes stream = fragment({1, 2, 3, 4, 5, 6, 7, 8}, true);
  ASSERT_FALSE(r.feed({stream.data(), 6}, sink));
  const Error e = r.endOfStream();
  EXPECT_EQ(e.code, make_error_code(ClientErrc::kConnectionClosed));
  EXPECT_NE(
      e.message().find("tcp server:2049 closed in the middle of a reply (6 bytes of it received)"),
      std::string::npos)
      << e.message();
}

}  // namespace
}  // namespace nfsrdma::transport
