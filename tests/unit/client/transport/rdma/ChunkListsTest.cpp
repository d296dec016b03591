// The chunk lists of a call: which memory each chunk names and how it is
// registered, on a stand-in for the device (per-I/O registration, so every
// chunk is one registration of exactly its bytes).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "client/transport/rdma/ChunkLists.h"

namespace nfsrdma::transport::rdma {
namespace {

struct Device {
  struct Call {
    std::uintptr_t start;
    std::size_t length;
    unsigned access;
  };
  std::vector<Call> calls;
  std::unique_ptr<RegistrationStrategy> strategy = makeRegistrationStrategy(
      MemoryRegistration::kPerIo,
      [this](std::uintptr_t start, std::size_t length, unsigned access) {
        calls.push_back({start, length, access});
        return Registration{start, start + length, access,
                            0x100U + static_cast<std::uint32_t>(calls.size()), nullptr};
      });
};

std::uintptr_t addr(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p);
}

// A WRITE of 9000 bytes: header words, the data, its 3-byte pad, trailing ops.
struct WriteCall {
  std::vector<std::uint8_t> head = std::vector<std::uint8_t>(200, 1);
  std::vector<std::uint8_t> data = std::vector<std::uint8_t>(9001, 2);
  std::vector<std::uint8_t> tail = std::vector<std::uint8_t>(40, 3);
  std::vector<xdr::ConstBuffer> segments{
      {head.data(), head.size()}, {data.data(), data.size()}, {tail.data(), tail.size()}};
  std::vector<xdr::BulkSegment> bulk{{data, head.size(), 3}};
  OutgoingMessage message() const {
    OutgoingMessage m;
    m.segments = segments;
    m.bulk = bulk;
    m.size = head.size() + data.size() + tail.size();
    m.xid = 42;
    m.maxReplySize = 200;
    return m;
  }
};

TEST(ChunkLists, WritePayloadGoesAsAReadChunkAtItsXdrPosition) {
  WriteCall w;
  const OutgoingMessage m = w.message();
  const CallPlan p = planChunks(m, {});
  ASSERT_EQ(p.chunks.kind, CallKind::kReadChunks);
  Device dev;
  CallChunks call;
  RpcRdmaHeader h;
  EXPECT_EQ(encodeReadList(m, p, *dev.strategy, call, h), 9001U);
  ASSERT_EQ(h.reads.size(), 1U);
  EXPECT_EQ(h.reads[0], (ReadSegment{200, {0x101, 9001, addr(w.data.data())}}));
  ASSERT_EQ(dev.calls.size(), 1U);
  EXPECT_EQ(dev.calls[0].access, unsigned{kRemoteRead});  // never remote write for a source
  EXPECT_EQ(call.registrations.size(), 1U);
  EXPECT_EQ(p.chunked().size(), 1U);
}

TEST(ChunkLists, PositionZeroCopiesTheWholeCallIntoItsOwnMemory) {
  std::vector<std::uint8_t> big(3000, 7);
  const std::vector<xdr::ConstBuffer> segments{{big.data(), 1000}, {big.data() + 1000, 2000}};
  OutgoingMessage m;
  m.segments = segments;
  m.size = 3000;
  const CallPlan p = planChunks(m, {});  // nothing DDP-eligible, too big for 1024 inline
  ASSERT_EQ(p.chunks.kind, CallKind::kPositionZero);
  EXPECT_TRUE(p.chunked().empty());
  Device dev;
  CallChunks call;
  RpcRdmaHeader h;
  EXPECT_EQ(encodeReadList(m, p, *dev.strategy, call, h), 3000U);
  ASSERT_EQ(h.reads.size(), 1U);
  EXPECT_EQ(h.reads[0].position, 0U);
  EXPECT_EQ(h.reads[0].target.offset, addr(call.positionZeroMemory.data()));
  EXPECT_EQ(call.positionZeroMemory, big);
}

TEST(ChunkLists, OnlyLargeReadsGetAWriteChunkInTheCallersBuffer) {
  std::vector<std::uint8_t> small(512), large(65536);
  const std::vector<std::span<std::uint8_t>> replies{small, large};
  const std::vector<std::uint8_t> head(120, 0);
  const std::vector<xdr::ConstBuffer> segments{{head.data(), head.size()}};
  OutgoingMessage m;
  m.segments = segments;
  m.size = head.size();
  m.directReplies = replies;
  m.maxReplySize = 300;
  const CallPlan p = planChunks(m, {});
  Device dev;
  CallChunks call;
  RpcRdmaHeader h;
  encodeWriteList(m, p, *dev.strategy, call, h);
  ASSERT_EQ(h.writes.size(), 1U);
  EXPECT_EQ(h.writes[0], (WriteChunk{{0x101, 65536, addr(large.data())}}));
  EXPECT_EQ(dev.calls[0].access, unsigned{kRemoteWrite});
  EXPECT_EQ(call.directCount, 1U);
  EXPECT_EQ(call.directSizes[0], 65536U);
}

TEST(ChunkLists, ReplyChunkIsBoundedByTheLargestMessageAccepted) {
  const std::vector<std::uint8_t> head(100, 0);
  const std::vector<xdr::ConstBuffer> segments{{head.data(), head.size()}};
  OutgoingMessage m;
  m.segments = segments;
  m.size = head.size();
  m.maxReplySize = 1U << 20;  // a READDIR that may come back large
  const CallPlan p = planChunks(m, {});
  ASSERT_GT(p.chunks.replyChunk, 0U);
  Device dev;
  CallChunks call;
  RpcRdmaHeader h;
  encodeReplyChunk(p, 64 * 1024, *dev.strategy, call, h);
  EXPECT_TRUE(h.hasReply);
  ASSERT_EQ(h.reply.size(), 1U);
  EXPECT_EQ(call.replyMemory.size(), 64U * 1024 + 1024);
  EXPECT_EQ(h.reply[0], (Segment{0x101, 64 * 1024 + 1024, addr(call.replyMemory.data())}));
}

TEST(ChunkLists, AnInlineCallHasNoChunksAndRegistersNothing) {
  const std::vector<std::uint8_t> head(100, 0);
  const std::vector<xdr::ConstBuffer> segments{{head.data(), head.size()}};
  OutgoingMessage m;
  m.segments = segments;
  m.size = head.size();
  const CallPlan p = planChunks(m, {});
  ASSERT_EQ(p.chunks.kind, CallKind::kInline);
  Device dev;
  CallChunks call;
  RpcRdmaHeader h;
  EXPECT_EQ(encodeReadList(m, p, *dev.strategy, call, h), 0U);
  encodeWriteList(m, p, *dev.strategy, call, h);
  encodeReplyChunk(p, 1U << 20, *dev.strategy, call, h);
  EXPECT_TRUE(h.reads.empty() && h.writes.empty() && !h.hasReply);
  EXPECT_TRUE(dev.calls.empty());
}

}  // namespace
}  // namespace nfsrdma::transport::rdma
