// TcpTransport record marking against a scripted peer: how bytes arrive
// (fragments, single bytes, many records per write, megabyte records through
// the large-record path, real TCP with SO_RCVLOWAT) must never change what is
// delivered, and every bad input (oversized fragment, a peer that hangs up
// mid-record) ends in exactly one transport error, never a crash or a hang.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/transport/TcpTransport.h"
#include "tests/unit/client/ScriptedPeer.h"

namespace nfsrdma::testpeer {
namespace {

using namespace std::chrono_literals;

constexpr auto kWait = 3s;  // bound on every wait for the client

// Records what the transport delivers, and lets the test wait for it.
class RecordingSink final : public transport::TransportSink {
 public:
  void onMessage(std::span<const std::uint8_t> message) override { onMessage(message, {}); }
  void onMessage(std::span<const std::uint8_t> message,
                 std::span<const std::uint32_t> placed) override {
    std::lock_guard lock(mu_);
    messages_.emplace_back(message.begin(), message.end());
    placed_.emplace_back(placed.begin(), placed.end());
    cv_.notify_all();
  }
  void onTransportError(const Error& error) override {
    std::lock_guard lock(mu_);
    errors_.push_back(error);
    cv_.notify_all();
  }
  void onTick() override {
    std::lock_guard lock(mu_);
    ++ticks_;
    cv_.notify_all();
  }
  std::size_t callsInFlight() const override { return 0; }

  bool waitMessages(std::size_t n, std::chrono::milliseconds timeout = kWait) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return messages_.size() >= n; });
  }
  bool waitError(std::chrono::milliseconds timeout = kWait) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return !errors_.empty(); });
  }
  bool waitTicks(std::size_t n, std::chrono::milliseconds timeout = kWait) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return ticks_ >= n; });
  }
  std::vector<Bytes> messages() const {
    std::lock_guard lock(mu_);
    return messages_;
  }
  std::vector<Error> errors() const {
    std::lock_guard lock(mu_);
    return errors_;
  }
  // Per message, the lengths the transport placed directly (empty: none).
  std::vector<std::vector<std::uint32_t>> placed() const {
    std::lock_guard lock(mu_);
    return placed_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Bytes> messages_;
  std::vector<Error> errors_;
  std::vector<std::vector<std::uint32_t>> placed_;
  std::size_t ticks_ = 0;
};

// ::testing::AssertionResult with a short description of the first difference,
// instead of gtest printing a megabyte of bytes.
::testing::AssertionResult sameBytes(const Bytes& got, const Bytes& want) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << ", expected " << want.size();
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i]) {
      return ::testing::AssertionFailure()
             << "first difference at byte " << i << " of " << got.size();
    }
  }
  return ::testing::AssertionSuccess();
}

transport::OutgoingMessage outgoing(const Bytes& message, xdr::ConstBuffer& segment) {
  segment = {message.data(), message.size()};
  transport::OutgoingMessage out;
  out.segments = {&segment, 1};
  out.size = message.size();
  return out;
}

class TcpTransportTest : public ::testing::Test {
 protected:
  void SetUp() override { start(connectSocketPair()); }
  void start(Connection c) {
    conn_ = std::move(c);
    conn_.transport->start(sink_);
  }
  ScriptedPeer& peer() { return *conn_.peer; }
  transport::TcpTransport& transport() { return *conn_.transport; }

  // The only error the transport reported (exactly one is expected).
  Error onlyError() {
    EXPECT_TRUE(sink_.waitError()) << "no transport error within " << kWait.count() << " s";
    const auto errors = sink_.errors();
    EXPECT_EQ(errors.size(), 1U);
    return errors.empty() ? Error{} : errors.front();
  }

  RecordingSink sink_;  // outlives the transport (declared first, destroyed last)
  Connection conn_;
};

TEST_F(TcpTransportTest, SingleFragmentRecordIsDeliveredWhole) {
  const Bytes msg = pattern(123, 1);
  ASSERT_TRUE(peer().sendRecord(msg));
  ASSERT_TRUE(sink_.waitMessages(1));
  EXPECT_TRUE(sameBytes(sink_.messages().at(0), msg));
  EXPECT_TRUE(sink_.errors().empty());
}

TEST_F(TcpTransportTest, RecordSplitIntoFragmentsIsReassembled) {
  const Bytes msg = pattern(123, 2);
  const std::size_t sizes[] = {1, 3, 0, 17, 100, 2};  // a zero-length fragment too
  ASSERT_TRUE(peer().send(frameFragments(msg, sizes)));
  ASSERT_TRUE(sink_.waitMessages(1));
  EXPECT_TRUE(sameBytes(sink_.messages().at(0), msg));
  EXPECT_EQ(sink_.messages().size(), 1U);
}

TEST_F(TcpTransportTest, FragmentsArrivingInSeparateReadsAreReassembled) {
  const Bytes msg = pattern(5000, 3);
  const std::size_t sizes[] = {1000, 1, 2999, 1000};
  const Bytes wire = frameFragments(msg, sizes);
  // One fragment (header and body) per client read.
  std::size_t at = 0;
  for (std::size_t s : sizes) {
    const std::span<const std::uint8_t> piece(wire.data() + at, 4 + s);
    ASSERT_TRUE(peer().send(piece));
    ASSERT_TRUE(peer().waitConsumed());
    at += 4 + s;
  }
  ASSERT_TRUE(sink_.waitMessages(1));
  EXPECT_TRUE(sameBytes(sink_.messages().at(0), msg));
  EXPECT_EQ(sink_.messages().size(), 1U);
}

TEST_F(TcpTransportTest, RecordsDeliveredOneByteAtATime) {
  const Bytes first = pattern(37, 4);
  const Bytes second = pattern(8, 5);
  const std::size_t sizes[] = {20, 17};
  const Bytes wire = concat({frameFragments(first, sizes), frame(second)});
  ASSERT_TRUE(peer().trickle(wire, 1));  // every recv() of the client sees one byte
  ASSERT_TRUE(sink_.waitMessages(2));
  const auto got = sink_.messages();
  ASSERT_EQ(got.size(), 2U);
  EXPECT_TRUE(sameBytes(got[0], first));
  EXPECT_TRUE(sameBytes(got[1], second));
  EXPECT_TRUE(sink_.errors().empty());
}

TEST_F(TcpTransportTest, ChunksSplittingMarkersAndBodies) {
  std::vector<Bytes> sent;
  Bytes wire;
  for (std::uint32_t i = 0; i < 50; ++i) {
    sent.push_back(pattern(i * 3 % 29, 100 + i));
    const Bytes framed = frame(sent.back());
    wire.insert(wire.end(), framed.begin(), framed.end());
  }
  ASSERT_TRUE(peer().trickle(wire, 3));
  ASSERT_TRUE(sink_.waitMessages(sent.size()));
  const auto got = sink_.messages();
  ASSERT_EQ(got.size(), sent.size());
  for (std::size_t i = 0; i < sent.size(); ++i)
    EXPECT_TRUE(sameBytes(got[i], sent[i])) << "record " << i;
}

TEST_F(TcpTransportTest, ManyRecordsInOneWrite) {
  std::vector<Bytes> sent;
  Bytes wire;
  for (std::uint32_t i = 0; i < 1000; ++i) {
    sent.push_back(pattern(i % 301, i));
    const Bytes framed = frame(sent.back());
    wire.insert(wire.end(), framed.begin(), framed.end());
  }
  ASSERT_TRUE(peer().send(wire));
  ASSERT_TRUE(sink_.waitMessages(sent.size()));
  const auto got = sink_.messages();
  ASSERT_EQ(got.size(), sent.size());
  for (std::size_t i = 0; i < sent.size(); ++i)
    EXPECT_TRUE(sameBytes(got[i], sent[i])) << "record " << i;
  EXPECT_TRUE(sink_.errors().empty());
}

TEST_F(TcpTransportTest, FragmentAtTheMaximumIsAccepted) {
  transport().setMaxIncomingMessage(4096);
  const Bytes msg = pattern(4096, 6);
  ASSERT_TRUE(peer().sendRecord(msg));
  ASSERT_TRUE(sink_.waitMessages(1));
  EXPECT_TRUE(sameBytes(sink_.messages().at(0), msg));
  EXPECT_TRUE(sink_.errors().empty());
}

TEST_F(TcpTransportTest, FragmentLargerThanTheMaximumFails) {
  transport().setMaxIncomingMessage(4096);
  const Bytes before = pattern(10, 7);
  // A good record, then the marker of a 4097-byte fragment and part of its body.
  ASSERT_TRUE(peer().send(concat({frame(before), recordMarker(4097, true), pattern(100, 8)})));
  const Error e = onlyError();
  EXPECT_EQ(e.code, make_error_code(ClientErrc::kRecordTooLarge));
  EXPECT_EQ(
      e.message(),
      "peer socketpair: record fragment of 4097 bytes exceeds the negotiated maximum of 4096: "
      "record larger than the negotiated maximum");
  // The record before it was delivered; nothing after it is.
  const auto got = sink_.messages();
  ASSERT_EQ(got.size(), 1U);
  EXPECT_TRUE(sameBytes(got[0], before));
}

TEST_F(TcpTransportTest, FragmentsAddingUpBeyondTheMaximumFail) {
  transport().setMaxIncomingMessage(4096);
  const Bytes msg = pattern(6000, 9);
  const std::size_t sizes[] = {3000, 3000};  // each fits, the record does not
  ASSERT_TRUE(peer().send(frameFragments(msg, sizes)));
  const Error e = onlyError();
  EXPECT_EQ(e.code, make_error_code(ClientErrc::kRecordTooLarge));
  EXPECT_NE(e.context.find("record fragment of 3000 bytes exceeds the negotiated maximum of 4096"),
            std::string::npos)
      << e.message();
  EXPECT_TRUE(sink_.messages().empty());
}

TEST_F(TcpTransportTest, HugeMarkerIsRejectedBeforeAnyAllocation) {
  // 2 GiB - 1 announced with the default 1 MiB maximum: refused at the marker.
  ASSERT_TRUE(peer().send(concat({recordMarker(0x7fffffffU, true), pattern(64, 10)})));
  const Error e = onlyError();
  EXPECT_EQ(e.code, make_error_code(ClientErrc::kRecordTooLarge));
  EXPECT_NE(e.context.find(
                "record fragment of 2147483647 bytes exceeds the negotiated maximum of 1048576"),
            std::string::npos)
      << e.message();
}

TEST_F(TcpTransportTest, NothingIsDeliveredAfterARecordTooLarge) {
  transport().setMaxIncomingMessage(100);
  ASSERT_TRUE(peer().send(recordMarker(101, true)));
  ASSERT_TRUE(sink_.waitError());
  // The peer keeps talking; the transport must not resume parsing mid-stream.
  ASSERT_TRUE(peer().send(concat({pattern(101, 11), frame(pattern(8, 12))}), 500ms));
  EXPECT_FALSE(sink_.waitMessages(1, 200ms));
  EXPECT_EQ(sink_.errors().size(), 1U);
}

TEST_F(TcpTransportTest, LargeRecordIsDeliveredByteExact) {
  transport().setMaxIncomingMessage(2U << 20);
  const Bytes large = pattern((1U << 20) + 7, 13);  // beyond half of the 256 KiB input buffer
  const Bytes small = pattern(16, 14);
  ASSERT_TRUE(peer().send(concat({frame(large), frame(small)})));
  ASSERT_TRUE(sink_.waitMessages(2));
  const auto got = sink_.messages();
  ASSERT_EQ(got.size(), 2U);
  EXPECT_TRUE(sameBytes(got[0], large));
  EXPECT_TRUE(sameBytes(got[1], small));
  EXPECT_TRUE(sink_.errors().empty());
}

TEST_F(TcpTransportTest, LargeRecordArrivingInPiecesIsByteExact) {
  transport().setMaxIncomingMessage(2U << 20);
  const Bytes large = pattern((1U << 20) + 7, 15);
  const Bytes small = pattern(40, 16);
  // Uneven pieces, each read before the next is written: the large-record
  // path has to stop when the socket is drained and resume where it was.
  ASSERT_TRUE(peer().trickle(concat({frame(small), frame(large), frame(small)}), 65536 + 3));
  ASSERT_TRUE(sink_.waitMessages(3));
  const auto got = sink_.messages();
  ASSERT_EQ(got.size(), 3U);
  EXPECT_TRUE(sameBytes(got[0], small));
  EXPECT_TRUE(sameBytes(got[1], large));
  EXPECT_TRUE(sameBytes(got[2], small));
}

TEST_F(TcpTransportTest, LargeRecordInLargeFragmentsIsByteExact) {
  transport().setMaxIncomingMessage(2U << 20);
  const Bytes large = pattern((1U << 20) + 7, 17);
  const std::size_t sizes[] = {400000, 3, 400000, large.size() - 800003};
  ASSERT_TRUE(peer().send(frameFragments(large, sizes)));
  ASSERT_TRUE(sink_.waitMessages(1));
  EXPECT_TRUE(sameBytes(sink_.messages().at(0), large));
}

TEST_F(TcpTransportTest, BackToBackLargeRecords) {
  transport().setMaxIncomingMessage(2U << 20);
  std::vector<Bytes> sent;
  Bytes wire;
  for (std::uint32_t i = 0; i < 4; ++i) {
    sent.push_back(pattern(300000 + i * 100001, 20 + i));
    const Bytes framed = frame(sent.back());
    wire.insert(wire.end(), framed.begin(), framed.end());
  }
  ASSERT_TRUE(peer().send(wire));
  ASSERT_TRUE(sink_.waitMessages(sent.size()));
  const auto got = sink_.messages();
  ASSERT_EQ(got.size(), sent.size());
  for (std::size_t i = 0; i < sent.size(); ++i)
    EXPECT_TRUE(sameBytes(got[i], sent[i])) << "record " << i;
}

TEST_F(TcpTransportTest, PeerClosingInTheMiddleOfARecord) {
  ASSERT_TRUE(peer().send(concat({recordMarker(100, true), pattern(40, 18)})));
  ASSERT_TRUE(peer().waitConsumed());
  peer().hangUp();
  const Error e = onlyError();
  EXPECT_EQ(e.code, make_error_code(ClientErrc::kConnectionClosed));
  EXPECT_EQ(e.context, "peer socketpair closed in the middle of a reply (44 bytes of it received)");
  EXPECT_TRUE(sink_.messages().empty());
}

TEST_F(TcpTransportTest, PeerClosingBetweenFragmentsOfARecord) {
  const Bytes part = pattern(12, 19);
  ASSERT_TRUE(peer().send(concat({recordMarker(12, false), part})));  // complete, not last
  ASSERT_TRUE(peer().waitConsumed());
  peer().hangUp();
  const Error e = onlyError();
  EXPECT_EQ(e.code, make_error_code(ClientErrc::kConnectionClosed));
  EXPECT_NE(e.context.find("closed in the middle of a reply"), std::string::npos) << e.message();
  EXPECT_TRUE(sink_.messages().empty());
}

TEST_F(TcpTransportTest, PeerClosingInTheMiddleOfALargeRecord) {
  transport().setMaxIncomingMessage(2U << 20);
  ASSERT_TRUE(peer().send(concat({recordMarker((1U << 20) + 7, true), pattern(300000, 20)})));
  ASSERT_TRUE(peer().waitConsumed());
  peer().hangUp();
  const Error e = onlyError();
  EXPECT_EQ(e.code, make_error_code(ClientErrc::kConnectionClosed));
  EXPECT_EQ(e.context,
            "peer socketpair closed in the middle of a reply (300000 of 1048583 bytes received)");
  EXPECT_TRUE(sink_.messages().empty());
}

TEST_F(TcpTransportTest, CleanCloseBetweenRecords) {
  ASSERT_TRUE(peer().sendRecord(pattern(8, 21)));
  ASSERT_TRUE(sink_.waitMessages(1));
  peer().hangUp();
  const Error e = onlyError();
  EXPECT_EQ(e.code, make_error_code(ClientErrc::kConnectionClosed));
  EXPECT_EQ(e.message(), "peer socketpair: connection closed by the server");
}

TEST_F(TcpTransportTest, SendAfterTheConnectionFailedReturnsAnError) {
  peer().hangUp();
  ASSERT_TRUE(sink_.waitError());
  const Bytes msg = pattern(64, 22);
  xdr::ConstBuffer seg;
  const Error e = transport().send(outgoing(msg, seg));
  EXPECT_EQ(e.code, make_error_code(ClientErrc::kConnectionClosed));
  EXPECT_EQ(e.context, "send on peer socketpair");
}

TEST_F(TcpTransportTest, LargeSendReturnsAtOnceAndArrivesWhole) {
  // Far more than the socket buffers hold while the peer is not reading:
  // send() must queue the rest and return, and the I/O thread finishes it.
  const Bytes msg = pattern(4U << 20, 23);
  xdr::ConstBuffer seg;
  const auto t0 = std::chrono::steady_clock::now();
  const Error e = transport().send(outgoing(msg, seg));
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(e) << e.message();
  EXPECT_LT(took, 1s);
  // The transport no longer needs the caller's memory once send() returned.
  auto record = peer().readRecord();
  ASSERT_TRUE(record.has_value());
  EXPECT_TRUE(sameBytes(*record, msg));
}

TEST_F(TcpTransportTest, TicksArriveWhileIdle) {
  EXPECT_TRUE(sink_.waitTicks(2, 1s));
}

TEST_F(TcpTransportTest, CloseWhileALargeRecordIsHalfReceivedDoesNotHang) {
  transport().setMaxIncomingMessage(2U << 20);
  ASSERT_TRUE(peer().send(concat({recordMarker(1U << 20, true), pattern(200000, 24)})));
  ASSERT_TRUE(peer().waitConsumed());
  const auto t0 = std::chrono::steady_clock::now();
  transport().close();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  EXPECT_TRUE(sink_.messages().empty());
}

// ---- direct placement: a READ reply's data lands in the caller's buffer

// A reply shaped like a READ's: XID, some header words, the data's XDR
// length, the data, the XDR pad. Returns the record body; 'head' gets the
// part before the data (what a placing transport hands up).
Bytes readShapedReply(std::uint32_t xid, const Bytes& data, Bytes& head) {
  head = concat({word(xid), pattern(92, 3), word(static_cast<std::uint32_t>(data.size()))});
  const std::size_t pad = (4 - data.size() % 4) % 4;
  return concat({head, data, Bytes(pad, 0)});
}

class TcpPlacementTest : public TcpTransportTest {
 protected:
  // Sends a call with XID xid whose reply should land in dst.
  void callWithDestination(std::uint32_t xid, std::span<std::uint8_t> dst) {
    static const Bytes call = pattern(64, 9);
    xdr::ConstBuffer seg;
    transport::OutgoingMessage out = outgoing(call, seg);
    out.xid = xid;
    dest_ = dst;
    out.directReplies = {&dest_, 1};
    ASSERT_FALSE(transport().send(out));
  }
  // A READ registers a buffer for XID 9; its small (error) reply arrives in
  // record fragments of these sizes (one: a single fragment). A later
  // READ-shaped record with that XID (a duplicate reply) must then be
  // delivered whole and must not reach the buffer.
  void expectSmallReplyEndsTheRegistration(std::span<const std::size_t> fragmentSizes) {
    transport().setMaxIncomingMessage(2U << 20);
    Bytes dst(100000, 0);
    callWithDestination(9, dst);
    const Bytes error = concat({word(9), pattern(20, 4)});  // e.g. NFS4ERR_IO: no data
    ASSERT_TRUE(
        peer().send(fragmentSizes.empty() ? frame(error) : frameFragments(error, fragmentSizes)));
    ASSERT_TRUE(sink_.waitMessages(1));
    EXPECT_TRUE(sameBytes(sink_.messages().back(), error));
    Bytes head;
    const Bytes dup = readShapedReply(9, pattern(dst.size(), 8), head);
    ASSERT_TRUE(peer().send(frame(dup)));
    ASSERT_TRUE(sink_.waitMessages(2));
    EXPECT_TRUE(sameBytes(sink_.messages().back(), dup));
    EXPECT_EQ(std::count(dst.begin(), dst.end(), 0), static_cast<std::ptrdiff_t>(dst.size()));
  }
  std::span<std::uint8_t> dest_;
};

TEST_F(TcpPlacementTest, LargeReadReplyLandsInTheCallersBuffer) {
  transport().setMaxIncomingMessage(2U << 20);
  for (const std::size_t size : {std::size_t{200000}, std::size_t{200001}, std::size_t{1U << 20}}) {
    SCOPED_TRACE(size);
    const auto xid = static_cast<std::uint32_t>(1000 + size);
    Bytes dst(size, 0);
    callWithDestination(xid, dst);
    const Bytes data = pattern(size, static_cast<std::uint32_t>(size));
    Bytes head;
    const std::size_t before = sink_.messages().size();
    ASSERT_TRUE(peer().trickle(frame(readShapedReply(xid, data, head)), 65536 + 5));
    ASSERT_TRUE(sink_.waitMessages(before + 1));
    EXPECT_TRUE(sameBytes(sink_.messages().back(), head));
    EXPECT_EQ(sink_.placed().back(), std::vector<std::uint32_t>{static_cast<std::uint32_t>(size)});
    EXPECT_TRUE(sameBytes(dst, data));
  }
  EXPECT_NE(transport().statsLine().find("direct_replies=3 direct_fallbacks=0"), std::string::npos)
      << transport().statsLine();
  EXPECT_TRUE(sink_.errors().empty());
}

TEST_F(TcpPlacementTest, RecordsAroundAPlacedReplyAreUntouched) {
  transport().setMaxIncomingMessage(2U << 20);
  Bytes dst(300000, 0);
  callWithDestination(77, dst);
  const Bytes data = pattern(dst.size(), 5);
  Bytes head;
  const Bytes small = pattern(40, 6);
  const Bytes large = pattern(500000, 7);  // no registration: received whole
  ASSERT_TRUE(peer().send(
      concat({frame(small), frame(readShapedReply(77, data, head)), frame(large), frame(small)})));
  ASSERT_TRUE(sink_.waitMessages(4));
  const auto got = sink_.messages();
  const auto placed = sink_.placed();
  EXPECT_TRUE(sameBytes(got[0], small));
  EXPECT_TRUE(sameBytes(got[1], head));
  EXPECT_EQ(placed[1].size(), 1U);
  EXPECT_TRUE(sameBytes(got[2], large));
  EXPECT_TRUE(placed[2].empty());
  EXPECT_TRUE(sameBytes(got[3], small));
  EXPECT_TRUE(sameBytes(dst, data));
}

TEST_F(TcpPlacementTest, ReplyCarryingOtherThanTheAskedLengthIsDeliveredWhole) {
  transport().setMaxIncomingMessage(2U << 20);
  // The server sent more than asked (a broken server) and, second, less (EOF):
  // the tail is not the data, so the record arrives whole for the decoder.
  Bytes dst(100000, 0);
  callWithDestination(5, dst);
  Bytes head;
  const Bytes longer = readShapedReply(5, pattern(150000, 1), head);
  ASSERT_TRUE(peer().send(frame(longer)));
  ASSERT_TRUE(sink_.waitMessages(1));
  EXPECT_TRUE(sameBytes(sink_.messages().back(), longer));
  EXPECT_TRUE(sink_.placed().back().empty());

  callWithDestination(6, dst);
  const Bytes shorter = readShapedReply(6, pattern(60000, 2), head);
  ASSERT_TRUE(peer().send(frame(shorter)));
  ASSERT_TRUE(sink_.waitMessages(2));
  EXPECT_TRUE(sameBytes(sink_.messages().back(), shorter));
  EXPECT_TRUE(sink_.placed().back().empty());
  EXPECT_NE(transport().statsLine().find("direct_replies=0"), std::string::npos)
      << transport().statsLine();
}

TEST_F(TcpPlacementTest, SmallReplyEndsTheRegistration) {
  expectSmallReplyEndsTheRegistration({});
}

// The same when the reply's first fragment is shorter than its XID (legal
// record marking): the registration must end when the record is complete.
TEST_F(TcpPlacementTest, SmallReplyInTinyFragmentsEndsTheRegistration) {
  const std::size_t sizes[] = {2, 22};
  expectSmallReplyEndsTheRegistration(sizes);
}

TEST_F(TcpPlacementTest, AbandonedCallsBufferIsNotWrittenAfterwards) {
  transport().setMaxIncomingMessage(2U << 20);
  Bytes dst(1U << 20, 0);
  callWithDestination(11, dst);
  Bytes head;
  const Bytes reply = frame(readShapedReply(11, pattern(dst.size(), 9), head));
  const std::size_t half = reply.size() / 2;
  ASSERT_TRUE(peer().send(std::span<const std::uint8_t>(reply.data(), half)));
  ASSERT_TRUE(peer().waitConsumed());
  transport().abandon(11);  // the call timed out; its caller may free dst now
  const Bytes snapshot = dst;
  ASSERT_TRUE(peer().send(std::span<const std::uint8_t>(reply.data() + half, reply.size() - half)));
  ASSERT_TRUE(sink_.waitMessages(1));
  EXPECT_TRUE(sameBytes(dst, snapshot));
  EXPECT_TRUE(sink_.errors().empty());
}

// Real TCP: segmenting, and the SO_RCVLOWAT the large-record path sets.
class TcpTransportLoopbackTest : public TcpTransportTest {
 protected:
  void SetUp() override { start(connectTcpLoopback()); }
};

TEST_F(TcpTransportLoopbackTest, LargeRecordsOverRealTcpAreByteExact) {
  transport().setMaxIncomingMessage(2U << 20);
  const Bytes large = pattern((1U << 20) + 7, 25);
  const Bytes small = pattern(24, 26);
  const Bytes wire = concat({frame(large), frame(small), frame(large), frame(small)});
  // Uneven writes: the client sees a record start, then the rest later.
  const std::size_t cuts[] = {3, 70000, 600001, wire.size()};
  std::size_t at = 0;
  for (std::size_t cut : cuts) {
    ASSERT_TRUE(peer().send(std::span<const std::uint8_t>(wire.data() + at, cut - at)));
    at = cut;
  }
  ASSERT_TRUE(sink_.waitMessages(4));
  const auto got = sink_.messages();
  ASSERT_EQ(got.size(), 4U);
  EXPECT_TRUE(sameBytes(got[0], large));
  EXPECT_TRUE(sameBytes(got[1], small));
  EXPECT_TRUE(sameBytes(got[2], large));
  EXPECT_TRUE(sameBytes(got[3], small));
  EXPECT_TRUE(sink_.errors().empty());
}

TEST_F(TcpTransportLoopbackTest, PeerClosingInTheMiddleOfALargeRecordOverTcp) {
  transport().setMaxIncomingMessage(2U << 20);
  ASSERT_TRUE(peer().send(concat({recordMarker((1U << 20) + 7, true), pattern(300000, 27)})));
  peer().hangUp();
  const Error e = onlyError();
  EXPECT_EQ(e.code, make_error_code(ClientErrc::kConnectionClosed));
  EXPECT_EQ(e.context, transport().describe() +
                           " closed in the middle of a reply (300000 of 1048583 bytes received)");
}

// Placement over real TCP, where the transport raises SO_RCVLOWAT while a
// large reply arrives: however the bytes trickle in, it must wake for the
// record's last bytes and for the next record (a low-water mark above what
// the record still owes would hang here until the wait bound).
class TcpPlacementLoopbackTest : public TcpPlacementTest {
 protected:
  void SetUp() override { start(connectTcpLoopback()); }
};

TEST_F(TcpPlacementLoopbackTest, ReplyTricklingInIsPlacedAndTheNextRecordStillWakes) {
  transport().setMaxIncomingMessage(2U << 20);
  for (const std::size_t size : {std::size_t{1U << 20}, std::size_t{200003}}) {
    SCOPED_TRACE(size);
    const auto xid = static_cast<std::uint32_t>(500 + size);
    Bytes dst(size, 0);
    callWithDestination(xid, dst);
    const Bytes data = pattern(size, 31);
    Bytes head;
    const Bytes reply = frame(readShapedReply(xid, data, head));
    const Bytes small = pattern(24, 32);
    const std::size_t before = sink_.messages().size();
    // Pauses let the transport drain the socket and wait again between pieces.
    const std::size_t cuts[] = {
        3, 600, 70000, reply.size() / 2, reply.size() - 1000, reply.size() - 1, reply.size()};
    std::size_t at = 0;
    for (const std::size_t cut : cuts) {
      ASSERT_TRUE(peer().send(std::span<const std::uint8_t>(reply.data() + at, cut - at)));
      at = cut;
      std::this_thread::sleep_for(20ms);
    }
    ASSERT_TRUE(sink_.waitMessages(before + 1))
        << "the reply's last bytes did not wake the transport";
    ASSERT_TRUE(peer().send(frame(small)));
    ASSERT_TRUE(sink_.waitMessages(before + 2))
        << "a small record after the reply did not wake the transport";
    const auto got = sink_.messages();
    EXPECT_TRUE(sameBytes(got[before], head));
    EXPECT_EQ(sink_.placed()[before], std::vector<std::uint32_t>{static_cast<std::uint32_t>(size)});
    EXPECT_TRUE(sameBytes(dst, data));
    EXPECT_TRUE(sameBytes(got[before + 1], small));
  }
  EXPECT_TRUE(sink_.errors().empty());
}

}  // namespace
}  // namespace nfsrdma::testpeer
