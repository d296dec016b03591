// Why: the link server acts on numbers a peer sends (TX depth, CQ moderation,
// sizes, iteration counts). A zero CQ moderation used to reach a modulo, a
// zero TX depth a loop that never posts, and a huge count the clock
// arithmetic; each must be refused with a message naming the field. The wire
// layout is pinned byte for byte so two builds of the tool keep talking.
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "bench/link/LinkOptions.h"
#include "bench/link/LinkProtocol.h"
#include "tests/fuzz/LinkProtocolHarness.h"

namespace nfsrdma::bench {
namespace {

std::vector<std::byte> bytesOf(std::initializer_list<int> v) {
  std::vector<std::byte> out;
  for (int b : v) out.push_back(static_cast<std::byte>(b));
  return out;
}

ConnectRequest sampleRequest() {
  ConnectRequest r;
  r.test = 0;
  r.flags = kVerify | kLastSession;
  r.qpIndex = 1;
  r.qpCount = 2;
  r.txDepth = 128;
  r.cqModeration = 100;
  r.maxSize = 65536;
  r.slotBytes = 64;
  r.seed = 0x01020304;
  r.address = 0x1122334455667788ULL;
  r.rkey = 0xaabbccdd;
  return r;
}

// The message of the LinkProtocolError `f` throws ("" if none).
template <class F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const LinkProtocolError& e) {
    return e.what();
  }
  return "";
}

TEST(LinkProtocol, ConnectRequestWireBytes) {
  const std::vector<std::byte> want =
      bytesOf({0x42, 0x4c, 0x52, 0x4e,                          // magic "NRLB" little-endian
               0x02,                                            // version
               0x00, 0x06, 0x01, 0x02,                          // test, flags, QP index, QP count
               0x80, 0x00, 0x64, 0x00,                          // TX depth 128, CQ moderation 100
               0x00, 0x00, 0x01, 0x00,                          // largest message 65536
               0x40, 0x00, 0x00, 0x00,                          // slot bytes 64
               0x04, 0x03, 0x02, 0x01,                          // seed
               0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,  // address
               0xdd, 0xcc, 0xbb, 0xaa});                        // rkey
  EXPECT_EQ(sampleRequest().encode(), want);
}

TEST(LinkProtocol, ConnectRequestRoundTripsWithRdmaCmPadding) {
  std::vector<std::byte> wire = sampleRequest().encode();
  wire.resize(56);  // rdma_cm hands the server its full private data area
  const ConnectRequest d = ConnectRequest::decode(wire);
  EXPECT_EQ(d.encode(), sampleRequest().encode());
}

TEST(LinkProtocol, ConnectRequestOutOfRangeFieldsAreNamed) {
  const auto withField = [](auto set) {
    ConnectRequest r = sampleRequest();
    set(r);
    return errorOf([&] { (void)ConnectRequest::decode(r.encode()); });
  };
  EXPECT_EQ(withField([](ConnectRequest& r) { r.cqModeration = 0; }),
            "CQ moderation 0, expected 1..128");
  EXPECT_EQ(withField([](ConnectRequest& r) { r.cqModeration = 129; }),
            "CQ moderation 129, expected 1..128");
  EXPECT_EQ(withField([](ConnectRequest& r) { r.txDepth = 0; }), "TX depth 0, expected 1..8192");
  EXPECT_EQ(withField([](ConnectRequest& r) { r.txDepth = 9000; }),
            "TX depth 9000, expected 1..8192");
  EXPECT_EQ(withField([](ConnectRequest& r) { r.qpCount = 0; }), "QP count 0, expected 1..64");
  EXPECT_EQ(withField([](ConnectRequest& r) { r.qpCount = 65; }), "QP count 65, expected 1..64");
  EXPECT_EQ(withField([](ConnectRequest& r) { r.qpIndex = 2; }), "QP index 2, expected 0..1");
  EXPECT_EQ(withField([](ConnectRequest& r) { r.test = 3; }), "test 3, expected 0..2");
  EXPECT_EQ(withField([](ConnectRequest& r) { r.flags = 16; }), "unknown flags 0x10");
  // -e travels as a flag, so the -b server's own loop sleeps as the client's does.
  EXPECT_EQ(withField([](ConnectRequest& r) { r.flags = kUseEvents | kBidirectional; }), "");
  EXPECT_EQ(withField([](ConnectRequest& r) { r.maxSize = 0; }),
            "largest message size 0, expected 1..8388608");
  EXPECT_EQ(withField([](ConnectRequest& r) { r.maxSize = (8u << 20) + 1; }),
            "largest message size 8388609, expected 1..8388608");
}

TEST(LinkProtocol, ConnectRequestFromAnotherProgramOrVersion) {
  std::vector<std::byte> wire = sampleRequest().encode();
  EXPECT_EQ(errorOf([&] { (void)ConnectRequest::decode(std::span(wire).first(36)); }),
            "connect data of 36 bytes, expected at least 37");
  EXPECT_EQ(errorOf([] { (void)ConnectRequest::decode({}); }),
            "connect data of 0 bytes, expected at least 37");
  wire[4] = std::byte{1};  // before GO carried -D's margin
  EXPECT_EQ(errorOf([&] { (void)ConnectRequest::decode(wire); }),
            "link protocol version 1, this side speaks 2");
  wire[0] = std::byte{0};
  EXPECT_EQ(errorOf([&] { (void)ConnectRequest::decode(wire); }),
            "not an nfsrdma link client (magic 0x4e524c00, expected 0x4e524c42)");
}

TEST(LinkProtocol, ConnectReplyWireBytesAndErrors) {
  ConnectReply r;
  r.address = 0x0102030405060708ULL;
  r.rkey = 0x11223344;
  const std::vector<std::byte> want = bytesOf({0x42, 0x4c, 0x52, 0x4e, 0x08, 0x07, 0x06, 0x05, 0x04,
                                               0x03, 0x02, 0x01, 0x44, 0x33, 0x22, 0x11});
  EXPECT_EQ(r.encode(), want);
  const ConnectReply d = ConnectReply::decode(want);
  EXPECT_EQ(d.address, r.address);
  EXPECT_EQ(d.rkey, r.rkey);
  EXPECT_EQ(errorOf([&] { (void)ConnectReply::decode(std::span(want).first(15)); }),
            "accept data of 15 bytes, expected at least 16");
  std::vector<std::byte> other = want;
  other[3] = std::byte{0};
  EXPECT_EQ(errorOf([&] { (void)ConnectReply::decode(other); }),
            "the peer is not an nfsrdma link server (magic 0x524c42, expected 0x4e524c42)");
}

TEST(LinkProtocol, ControlMessageWireBytesAndRoundTrip) {
  ControlMessage m;
  m.kind = ControlKind::Fin;
  m.verify = VerifyState::Failed;
  m.size = 65536;
  m.iterations = 2000;
  m.durationUs = 0;
  m.messages = 7;
  m.nanos = 0x0100;
  m.peakMilli = 3;
  m.mismatch = 0x1000;
  std::array<std::byte, kControlBytes> wire{};
  m.encode(wire);
  std::vector<std::byte> want = bytesOf({4, 0, 0, 0, 2, 0, 0, 0});  // FIN, failed
  for (std::uint64_t v :
       {65536ULL, 2000ULL, 0ULL, 7ULL, 0x100ULL, 3ULL, 0x1000ULL}) {  // u64 LE fields
    for (int i = 0; i < 8; ++i) want.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
  }
  EXPECT_EQ(std::vector<std::byte>(wire.begin(), wire.end()), want);
  const ControlMessage d = ControlMessage::decode(wire);
  std::array<std::byte, kControlBytes> again{};
  d.encode(again);
  EXPECT_EQ(again, wire);
}

TEST(LinkProtocol, ControlMessageBadKindStateOrLength) {
  std::array<std::byte, kControlBytes> wire{};
  ControlMessage{}.encode(wire);
  EXPECT_EQ(errorOf([&] { (void)ControlMessage::decode(std::span(wire).first(63)); }),
            "control message of 63 bytes, expected at least 64");
  wire[0] = std::byte{6};
  EXPECT_EQ(errorOf([&] { (void)ControlMessage::decode(wire); }),
            "control message kind 6, expected 1..5");
  wire[0] = std::byte{0};
  EXPECT_EQ(errorOf([&] { (void)ControlMessage::decode(wire); }),
            "control message kind 0, expected 1..5");
  wire[0] = std::byte{1};
  wire[4] = std::byte{3};
  EXPECT_EQ(errorOf([&] { (void)ControlMessage::decode(wire); }), "verify state 3, expected 0..2");
}

TEST(LinkProtocol, GoMustBeRunnable) {
  ControlMessage go;
  go.size = 65536;
  go.iterations = 2000;
  EXPECT_EQ(errorOf([&] { checkGo(go, 65536); }), "");
  go.size = 65537;
  EXPECT_EQ(errorOf([&] { checkGo(go, 65536); }), "GO message size 65537, expected 1..65536");
  go.size = 0;
  EXPECT_EQ(errorOf([&] { checkGo(go, 65536); }), "GO message size 0, expected 1..65536");
  go.size = 2;
  go.iterations = kMaxLinkIterations + 1;
  EXPECT_EQ(errorOf([&] { checkGo(go, 65536); }),
            "GO iterations 1000000000001, expected 0..1000000000000");
  go.iterations = 0;
  EXPECT_EQ(errorOf([&] { checkGo(go, 65536); }), "GO with neither iterations nor a duration");
  go.durationUs = kMaxLinkDurationUs;
  EXPECT_EQ(errorOf([&] { checkGo(go, 65536); }), "");
  go.durationUs = ~0ULL;
  EXPECT_EQ(errorOf([&] { checkGo(go, 65536); }),
            "GO duration (us) 18446744073709551615, expected 0..3600000000");
}

// -D's margin travels in a GO's nanos (-b: the server measures its own
// window). It must leave part of the duration to measure.
TEST(LinkProtocol, GoMarginLeavesAWindow) {
  ControlMessage go;
  go.size = 65536;
  go.durationUs = 10'000'000;
  go.nanos = 2'000'000'000;
  EXPECT_EQ(errorOf([&] { checkGo(go, 65536); }), "");
  std::array<std::byte, kControlBytes> wire{};
  go.encode(wire);
  EXPECT_EQ(ControlMessage::decode(wire).nanos, 2'000'000'000u);
  go.nanos = 5'000'000'000;
  EXPECT_EQ(errorOf([&] { checkGo(go, 65536); }),
            "GO margin of 5000000000 ns leaves nothing of a 10000000 us duration to measure");
  go.durationUs = 0;
  go.iterations = 100;
  go.nanos = 1;
  EXPECT_EQ(errorOf([&] { checkGo(go, 65536); }),
            "GO margin of 1 ns leaves nothing of a 0 us duration to measure");
  go.nanos = ~0ULL;
  EXPECT_EQ(errorOf([&] { checkGo(go, 65536); }),
            "GO margin (ns) 18446744073709551615, expected 0..1800000000000");
}

TEST(LinkProtocol, TcpHelloStepAndStreamHello) {
  TcpHello h;
  h.streams = 4;
  h.flags = kTcpVerify;
  const std::array<std::uint64_t, 4> w = h.words();
  EXPECT_EQ(w, (std::array<std::uint64_t, 4>{0x4e52544c, 1, 4, 2}));
  EXPECT_EQ(TcpHello::decode(w).streams, 4u);
  EXPECT_EQ(errorOf([] {
              (void)TcpHello::decode({0x4e52544c, 1, 0, 0});
            }),
            "stream count 0, expected 1..128");
  EXPECT_EQ(errorOf([] {
              (void)TcpHello::decode({0x4e52544c, 1, 129, 0});
            }),
            "stream count 129, expected 1..128");
  EXPECT_EQ(errorOf([] { (void)TcpHello::decode({0x4e52544c, 1, 1, 4}); }), "unknown flags 0x4");
  EXPECT_EQ(errorOf([] {
              (void)TcpHello::decode({0x4e52544c, 2, 1, 0});
            }),
            "not an nfsrdma link client (hello 0x4e52544c 0x2, expected 0x4e52544c 0x1)");

  EXPECT_TRUE(TcpStep::decode({0, 0, 0}).isBye());
  EXPECT_EQ(TcpStep::decode({4096, 5000, 0}).size, 4096u);
  EXPECT_EQ(errorOf([] {
              (void)TcpStep::decode({(8u << 20) + 1, 1, 0});
            }),
            "step message size 8388609, expected 1..8388608");
  EXPECT_EQ(errorOf([] {
              (void)TcpStep::decode({4096, 0, 0});
            }),
            "step with neither iterations nor a duration");

  EXPECT_EQ(decodeTcpStreamHello(tcpStreamHelloWords(3), 4), 3u);
  EXPECT_EQ(errorOf([] { (void)decodeTcpStreamHello(tcpStreamHelloWords(4), 4); }),
            "stream index 4, expected 0..3");
  EXPECT_EQ(errorOf([] {
              (void)decodeTcpStreamHello({0x4e52544c, 2, 1, 1}, 4);
            }),
            "stream hello's reserved word 1, expected 0");
  EXPECT_EQ(errorOf([] {
              (void)decodeTcpStreamHello({0x4e52544c, 1, 0, 0}, 4);
            }),
            "unexpected connection during a TCP step (hello 0x4e52544c 0x1, expected a data stream "
            "of this session)");
}

// The client refuses at parse time what the server would refuse on the wire.
TEST(LinkProtocol, OptionBoundsAreTheWireBounds) {
  std::vector<std::string> args{"link", "-n", std::to_string(kMaxLinkIterations + 1), "h"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  try {
    (void)parseLinkOptions(static_cast<int>(argv.size()), argv.data());
    ADD_FAILURE() << "an iteration count above the wire bound was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "--iters must be 1..1000000000000");
  }
}

// The fuzz target's seed corpus, replayed without libFuzzer (also under the
// sanitizers in CI): each seed is refused with a message or round-trips.
TEST(LinkProtocolFuzzCorpus, ReplaysCleanly) {
  const std::filesystem::path dir =
      std::filesystem::path(NFSRDMA_SOURCE_DIR) / "tests/fuzz/corpus/fuzz_link_protocol";
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                          std::istreambuf_iterator<char>());
    EXPECT_TRUE(fuzz::runLinkProtocol(bytes)) << e.path();
    ++files;
  }
  EXPECT_GE(files, 14U);
}

}  // namespace
}  // namespace nfsrdma::bench
