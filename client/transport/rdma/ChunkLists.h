// The chunk lists of one RPC-over-RDMA call (RFC 8166 section 3.4): the
// memory each chunk exposes, registered through the transport's
// registration strategy, and the segments that name it in the call's
// transport header. One encoder per list, as the kernel's xprtrdma has
// (rpcrdma_encode_read_list and its siblings). No verbs here: the strategy
// is handed in, so the lists are unit-tested with a stand-in for the device.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "client/transport/Transport.h"
#include "client/transport/rdma/ChunkPlanner.h"
#include "client/transport/rdma/MemoryRegistration.h"
#include "client/transport/rdma/RpcRdmaHeader.h"
#include "client/xdr/XdrEncoder.h"

namespace nfsrdma::transport::rdma {

// What a call's plan starts from: its bulk payloads that may go as Read
// chunks, the sizes of the READs whose data could be placed, and the
// planner's choice.
struct CallPlan {
  std::array<xdr::BulkSegment, xdr::XdrEncoder::kMaxBulk> bulk{};
  std::size_t bulkCount = 0;
  std::array<std::size_t, 4> readSizes{};
  std::size_t reads = 0;
  ChunkPlan chunks;
  std::span<const xdr::BulkSegment> chunked() const;  // the payloads moved to Read chunks
};

// A message without a maximum reply size is planned for half our inline size.
CallPlan planChunks(const OutgoingMessage& message, const InlineLimits& limits);

// What a call in flight holds until its reply: the registrations keep the
// server's access to the memory the chunks name.
struct CallChunks {
  std::vector<std::shared_ptr<const Registration>> registrations;
  std::vector<std::uint8_t> replyMemory;         // Reply chunk target
  std::vector<std::uint8_t> positionZeroMemory;  // RDMA_NOMSG call body
  std::array<std::size_t, 4> directSizes{};      // each Write chunk's offered size
  std::size_t directCount = 0;
};

// Each adds its list to h, keeping the registrations in call; when memory
// cannot be registered, the strategy's std::system_error passes through.
// Read list: WRITE payloads at their XDR positions, or for RDMA_NOMSG the
// whole call copied into call memory at position zero. Returns the bytes
// the server will pull.
std::uint64_t encodeReadList(const OutgoingMessage& message, const CallPlan& p,
                             RegistrationStrategy& registrations, CallChunks& call,
                             RpcRdmaHeader& h);
// Write list: one chunk per READ larger than kSmallReadInline, targeting the
// caller's buffer.
void encodeWriteList(const OutgoingMessage& message, const CallPlan& p,
                     RegistrationStrategy& registrations, CallChunks& call, RpcRdmaHeader& h);
// Reply chunk: call memory for a reply that may not fit inline, at most
// maxIncoming (plus a margin for the reply header).
void encodeReplyChunk(const CallPlan& p, std::size_t maxIncoming,
                      RegistrationStrategy& registrations, CallChunks& call, RpcRdmaHeader& h);

}  // namespace nfsrdma::transport::rdma
