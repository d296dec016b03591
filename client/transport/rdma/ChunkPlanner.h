// Chunk decisions for RPC-over-RDMA v1 calls (RFC 8166 section 3.5, the NFS
// binding of RFC 8267 section 5), as a pure function of the call's shape and
// the connection's inline sizes, so every decision is unit-tested without
// verbs. The RDMA transport registers memory for what the plan names.
//
// Calls: inline (RDMA_MSG) when header + message fit the peer's receive
// size; otherwise the DDP-eligible payloads (WRITE data) move to Read chunks
// at their XDR positions, their XDR pad omitted; a call still too large, or
// one with nothing DDP-eligible, goes as RDMA_NOMSG with the whole message in
// one position-zero Read chunk.
// Replies: each READ's data lands in a Write chunk of its own (the Nth READ
// pairs with the Nth chunk); a reply whose remainder may exceed our inline
// receive size gets a Reply chunk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "client/transport/rdma/RpcRdmaHeader.h"
#include "client/xdr/XdrEncoder.h"

namespace nfsrdma::transport::rdma {

struct InlineLimits {
  std::size_t send = 1024;     // the peer's receive buffers (RFC 8797; 1024 without private data)
  std::size_t receive = 1024;  // our receive buffers
};

struct CallShape {
  std::size_t messageSize = 0;             // the whole RPC call, bulk included
  std::span<const xdr::BulkSegment> bulk;  // DDP-eligible call payloads, in stream order
  std::span<const std::size_t> readSizes;  // requested size of each READ in the call
  std::size_t maxReplySize = 0;            // largest reply, READ data excluded
};

enum class CallKind { kInline, kReadChunks, kPositionZero };

struct ChunkPlan {
  CallKind kind = CallKind::kInline;
  RdmaProc proc = RdmaProc::kMsg;
  std::size_t inlineBytes = 0;           // RPC bytes sent inline after the transport header
  std::vector<std::size_t> writeChunks;  // one per READ: its size
  std::size_t replyChunk = 0;            // 0: none
  std::size_t headerBytes = 0;           // transport header size for this plan
};

// Bytes of a transport header with these chunk counts (single-segment chunks).
std::size_t headerSize(std::size_t readSegments, std::size_t writeChunks, bool replyChunk);

// READs at most this large come back inline: a Write chunk costs more than copying them.
inline constexpr std::size_t kSmallReadInline = 1024;

ChunkPlan planCall(const CallShape& call, const InlineLimits& limits);

}  // namespace nfsrdma::transport::rdma
