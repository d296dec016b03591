// RPC-over-RDMA v1 header codec against byte strings worked out by hand from
// RFC 8166's XDR (section 4.3), RFC 8797 private data, and the chunk planner's
// decisions for each kind of call at inline sizes 1024 and 4096.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "client/transport/rdma/ChunkPlanner.h"
#include "client/transport/rdma/RpcRdmaHeader.h"

namespace nfsrdma::transport::rdma {
namespace {

std::vector<std::uint8_t> encode(const RpcRdmaHeader& h) {
  std::array<std::uint8_t, 1024> buf{};
  xdr::XdrEncoder enc(buf);
  encodeHeader(enc, h);
  EXPECT_FALSE(enc.overflowed());
  return {enc.head().begin(), enc.head().end()};
}

// Words, big-endian, as the RFC's XDR lays them out.
std::vector<std::uint8_t> words(std::initializer_list<std::uint32_t> ws) {
  std::vector<std::uint8_t> out;
  for (std::uint32_t w : ws) {
    out.push_back(static_cast<std::uint8_t>(w >> 24));
    out.push_back(static_cast<std::uint8_t>(w >> 16));
    out.push_back(static_cast<std::uint8_t>(w >> 8));
    out.push_back(static_cast<std::uint8_t>(w));
  }
  return out;
}

TEST(RpcRdmaHeader, InlineCallHasThreeEmptyLists) {
  RpcRdmaHeader h;
  h.xid = 0x01020304;
  h.credits = 32;
  // xid, vers 1, credits 32, RDMA_MSG, read list end, write list end, no reply chunk
  EXPECT_EQ(encode(h), words({0x01020304, 1, 32, 0, 0, 0, 0}));
}

TEST(RpcRdmaHeader, ReadListWriteListAndReplyChunk) {
  RpcRdmaHeader h;
  h.xid = 7;
  h.credits = 64;
  h.reads.push_back({120, {0xAABBCCDD, 4096, 0x1122334455667788ULL}});
  h.writes.push_back({{0x10, 8192, 0x2000}, {0x11, 100, 0x4000}});
  h.hasReply = true;
  h.reply.push_back({0x99, 65536, 0x8000});
  const auto expected = words({7,    1,          64,         0,     1, 120,    0xAABBCCDD,
                               4096, 0x11223344, 0x55667788,  // one read segment
                               0,                             // end of read list
                               1,    2,          0x10,       8192,  0, 0x2000, 0x11,
                               100,  0,          0x4000,  // a write chunk of 2 segments
                               0,                         // end of write list
                               1,    1,          0x99,       65536, 0, 0x8000});  // reply chunk
  EXPECT_EQ(encode(h), expected);

  RpcRdmaHeader back;
  std::size_t consumed = 0;
  ASSERT_FALSE(decodeHeader(expected, back, consumed));
  EXPECT_EQ(consumed, expected.size());
  EXPECT_EQ(back.reads, h.reads);
  EXPECT_EQ(back.writes, h.writes);
  EXPECT_TRUE(back.hasReply);
  EXPECT_EQ(back.reply, h.reply);
  EXPECT_EQ(back.credits, 64U);
}

TEST(RpcRdmaHeader, ServerReplyAsSeenFromSvcrdma) {
  // The 52-byte NULL reply the testbed notes record: 28 bytes of transport
  // header (credits 64, RDMA_MSG, empty lists) then the RPC reply.
  const auto bytes = words({0x5a5a0001, 1, 64, 0, 0, 0, 0, 0x5a5a0001, 1, 0, 0, 0, 0});
  RpcRdmaHeader h;
  std::size_t consumed = 0;
  ASSERT_FALSE(decodeHeader(bytes, h, consumed));
  EXPECT_EQ(consumed, 28U);
  EXPECT_EQ(h.xid, 0x5a5a0001U);
  EXPECT_EQ(h.credits, 64U);
  EXPECT_EQ(h.proc, RdmaProc::kMsg);
}

TEST(RpcRdmaHeader, ErrorsAreClear) {
  RpcRdmaHeader h;
  std::size_t consumed = 0;
  Error e = decodeHeader(words({1, 1, 1, 4, 1, 1, 1}), h, consumed);
  ASSERT_TRUE(e);
  EXPECT_EQ(e.message(),
            "RDMA_ERROR ERR_VERS: the server speaks RPC-over-RDMA versions 1-1: RPC call denied by "
            "the server");
  // ERR_CHUNK is not a rejection: the server may have run the call (svcrdma
  // sends it when the reply does not fit), so the session must not reuse
  // the slot's sequence id as if SEQUENCE never ran.
  e = decodeHeader(words({1, 1, 1, 4, 2}), h, consumed);
  ASSERT_TRUE(e);
  EXPECT_EQ(e.code, make_error_code(ClientErrc::kRdmaChunkError));
  EXPECT_NE(e.code, make_error_code(ClientErrc::kRpcDenied));
  EXPECT_EQ(e.message(),
            "RDMA_ERROR ERR_CHUNK: the server could not use the call's chunks (it may have "
            "executed the call)");
  e = decodeHeader(words({1, 2, 1, 0, 0, 0, 0}), h, consumed);
  ASSERT_TRUE(e);
  EXPECT_NE(e.message().find("version 2, expected 1"), std::string::npos);
  e = decodeHeader(words({1, 1, 1, 2, 0, 0, 0}), h, consumed);
  ASSERT_TRUE(e);
  EXPECT_NE(e.message().find("RDMA_MSGP"), std::string::npos);
  e = decodeHeader(words({1, 1, 1, 9}), h, consumed);
  ASSERT_TRUE(e);
  EXPECT_NE(e.message().find("unknown procedure 9"), std::string::npos);
  e = decodeHeader(words({1, 1, 1, 0, 0, 1, 65}), h, consumed);
  ASSERT_TRUE(e);
  EXPECT_NE(e.message().find("write chunk of 65 segments"), std::string::npos);
}

TEST(RpcRdmaHeader, TruncationAtEveryLengthIsAnError) {
  RpcRdmaHeader h;
  h.reads.push_back({4, {1, 2, 3}});
  h.writes.push_back({{4, 5, 6}});
  h.hasReply = true;
  h.reply.push_back({7, 8, 9});
  const auto full = encode(h);
  for (std::size_t n = 0; n < full.size(); ++n) {
    RpcRdmaHeader out;
    std::size_t consumed = 0;
    EXPECT_TRUE(decodeHeader({full.data(), n}, out, consumed)) << "length " << n;
  }
}

TEST(RpcRdmaPrivateData, MatchesRfc8797Layout) {
  ConnectionParameters p;
  p.remoteInvalidate = true;
  p.sendSize = 4096;
  p.receiveSize = 4096;
  std::array<std::uint8_t, kPrivateDataSize> out{};
  encodePrivateData(p, out);
  EXPECT_EQ(out, (std::array<std::uint8_t, 8>{0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 3}));
  // What svcrdma sends (padded by the provider to 196 bytes).
  std::vector<std::uint8_t> fromServer(196, 0);
  const std::uint8_t head[] = {0xf6, 0xab, 0x0e, 0x18, 1, 0, 3, 3};
  std::copy(std::begin(head), std::end(head), fromServer.begin());
  ConnectionParameters q;
  ASSERT_TRUE(decodePrivateData(fromServer, q));
  EXPECT_EQ(q.sendSize, 4096U);
  EXPECT_EQ(q.receiveSize, 4096U);
  EXPECT_FALSE(q.remoteInvalidate);
  fromServer[0] = 0;
  EXPECT_FALSE(decodePrivateData(fromServer, q));
  EXPECT_FALSE(decodePrivateData({head, 7}, q));
  // Another version's layout: its sizes are not read as version 1's.
  fromServer[0] = 0xf6;
  fromServer[4] = 2;
  EXPECT_FALSE(decodePrivateData(fromServer, q));
}

struct PlanCase {
  const char* name;
  std::size_t inlineSize;
  std::size_t message;
  std::size_t bulk;      // WRITE payload, 0 = none
  std::size_t readSize;  // READ count, 0 = no READ
  std::size_t maxReply;
  CallKind kind;
  std::size_t writeChunks;
  bool replyChunk;
};

class ChunkPlanTest : public ::testing::TestWithParam<PlanCase> {};

TEST_P(ChunkPlanTest, Decides) {
  const PlanCase& c = GetParam();
  std::vector<std::uint8_t> payload(c.bulk);
  std::vector<xdr::BulkSegment> bulk;
  if (c.bulk) bulk.push_back({payload, 200, xdr::xdrPad(c.bulk)});
  std::vector<std::size_t> reads;
  if (c.readSize) reads.push_back(c.readSize);
  ChunkPlan p = planCall({c.message, bulk, reads, c.maxReply}, {c.inlineSize, c.inlineSize});
  EXPECT_EQ(p.kind, c.kind);
  EXPECT_EQ(p.proc, c.kind == CallKind::kPositionZero ? RdmaProc::kNoMsg : RdmaProc::kMsg);
  EXPECT_EQ(p.writeChunks.size(), c.writeChunks);
  EXPECT_EQ(p.replyChunk > 0, c.replyChunk);
  if (c.kind == CallKind::kReadChunks) {
    EXPECT_EQ(p.inlineBytes, c.message - c.bulk - xdr::xdrPad(c.bulk));
  }
  if (c.kind == CallKind::kInline) {
    EXPECT_EQ(p.inlineBytes, c.message);
  }
  EXPECT_LE(p.headerBytes + p.inlineBytes, c.inlineSize);
}

INSTANTIATE_TEST_SUITE_P(
    Ops, ChunkPlanTest,
    ::testing::Values(
        // GETATTR: small call, small reply: all inline.
        PlanCase{"getattr_1k", 1024, 200, 0, 0, 300, CallKind::kInline, 0, false},
        PlanCase{"getattr_4k", 4096, 200, 0, 0, 300, CallKind::kInline, 0, false},
        // 4 KiB READ: data to a Write chunk at both sizes.
        PlanCase{"read4k_1k", 1024, 220, 0, 4096, 200, CallKind::kInline, 1, false},
        PlanCase{"read4k_4k", 4096, 220, 0, 4096, 200, CallKind::kInline, 1, false},
        // The reply header echoes the Write chunk (24 bytes): 980 bytes of
        // results fit 1024 behind a bare header, not behind that one.
        PlanCase{"read4k_bigreply_1k", 1024, 220, 0, 4096, 980, CallKind::kInline, 1, true},
        PlanCase{"read4k_reply_1k", 1024, 220, 0, 4096, 972, CallKind::kInline, 1, false},
        // A 512-byte READ comes back inline.
        PlanCase{"read512_1k", 1024, 220, 0, 512, 200, CallKind::kInline, 0, false},
        // 1 KiB WRITE: too big for 1024 inline (Read chunk), fits 4096.
        PlanCase{"write1k_1k", 1024, 1300, 1024, 0, 200, CallKind::kReadChunks, 0, false},
        PlanCase{"write1k_4k", 4096, 1300, 1024, 0, 200, CallKind::kInline, 0, false},
        // 1 MiB WRITE: Read chunk at both.
        PlanCase{"write1m_1k", 1024, (1U << 20) + 280, 1U << 20, 0, 200, CallKind::kReadChunks, 0,
                 false},
        PlanCase{"write1m_4k", 4096, (1U << 20) + 280, 1U << 20, 0, 200, CallKind::kReadChunks, 0,
                 false},
        // WRITE whose other arguments alone overflow the inline size: NOMSG.
        PlanCase{"write_bigargs_1k", 1024, 3000, 1000, 0, 200, CallKind::kPositionZero, 0, false},
        // A large call with nothing DDP-eligible (e.g. long names): NOMSG.
        PlanCase{"bigcall_1k", 1024, 2000, 0, 0, 200, CallKind::kPositionZero, 0, false},
        PlanCase{"bigcall_4k", 4096, 2000, 0, 0, 200, CallKind::kInline, 0, false},
        // READDIR with a 32 KiB reply: Reply chunk at both sizes.
        PlanCase{"readdir_1k", 1024, 250, 0, 0, 32768, CallKind::kInline, 0, true},
        PlanCase{"readdir_4k", 4096, 250, 0, 0, 32768, CallKind::kInline, 0, true},
        // A 2 KiB GETATTR reply: Reply chunk at 1024 only.
        PlanCase{"biggetattr_1k", 1024, 200, 0, 0, 2048, CallKind::kInline, 0, true},
        PlanCase{"biggetattr_4k", 4096, 200, 0, 0, 2048, CallKind::kInline, 0, false}),
    [](const ::testing::TestParamInfo<PlanCase>& param) { return std::string(param.param.name); });

}  // namespace
}  // namespace nfsrdma::transport::rdma

// The fuzz target's seed corpus, replayed without libFuzzer: every file
// decodes or is rejected, and what decodes survives a re-encode.
#include <filesystem>
#include <fstream>

#include "tests/fuzz/RdmaHeaderHarness.h"

namespace nfsrdma::transport::rdma {
namespace {
TEST(RdmaHeaderFuzzCorpus, ReplaysCleanly) {
  const std::filesystem::path dir =
      std::filesystem::path(NFSRDMA_SOURCE_DIR) / "tests/fuzz/corpus/fuzz_rdma_header";
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                    std::istreambuf_iterator<char>());
    EXPECT_TRUE(fuzz::runRdmaHeader(bytes)) << e.path();
    ++files;
  }
  EXPECT_GE(files, 10U);
}
}  // namespace
}  // namespace nfsrdma::transport::rdma
