// RPC-over-RDMA version 1 transport header (RFC 8166 section 4), as a pure
// codec: the chunk lists that precede every RPC message on an RDMA
// connection, and RDMA_ERROR. No verbs here: a segment is just a handle
// (rkey), a length and an offset (remote address).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "client/base/Error.h"
#include "client/xdr/XdrDecoder.h"
#include "client/xdr/XdrEncoder.h"

namespace nfsrdma::transport::rdma {

inline constexpr std::uint32_t kRpcRdmaVersion = 1;

enum class RdmaProc : std::uint32_t {
  kMsg = 0,    // RPC message follows inline
  kNoMsg = 1,  // RPC message is entirely in chunks
  kMsgp = 2,   // reserved (RFC 8166 section 4.5)
  kDone = 3,   // reserved
  kError = 4,
};

enum class RdmaErrorCode : std::uint32_t { kVers = 1, kChunk = 2 };

struct Segment {
  std::uint32_t handle = 0;  // rkey
  std::uint32_t length = 0;
  std::uint64_t offset = 0;  // remote address
  bool operator==(const Segment&) const = default;
};

// One read segment with its XDR position (a Read chunk is all segments
// sharing a position).
struct ReadSegment {
  std::uint32_t position = 0;
  Segment target;
  bool operator==(const ReadSegment&) const = default;
};

using WriteChunk = std::vector<Segment>;

struct RpcRdmaHeader {
  std::uint32_t xid = 0;
  std::uint32_t version = kRpcRdmaVersion;
  std::uint32_t credits = 0;
  RdmaProc proc = RdmaProc::kMsg;
  std::vector<ReadSegment> reads;
  std::vector<WriteChunk> writes;
  std::vector<Segment> reply;  // the Reply chunk; empty when absent
  bool hasReply = false;
  // RDMA_ERROR only.
  RdmaErrorCode error = RdmaErrorCode::kVers;
  std::uint32_t versLow = 0;
  std::uint32_t versHigh = 0;
};

// Limits a decoder enforces on untrusted headers.
inline constexpr std::size_t kMaxSegmentsPerChunk = 64;
inline constexpr std::size_t kMaxChunks = 16;

void encodeHeader(xdr::XdrEncoder& enc, const RpcRdmaHeader& h);

// Decodes a received header; on success 'consumed' is its length in bytes
// (the RPC message, for RDMA_MSG, follows). Errors name what is wrong:
// unknown version (with the version seen), unknown procedure, reserved
// procedures, oversized or truncated chunk lists, and RDMA_ERROR itself
// (ERR_VERS with the server's range, ERR_CHUNK).
Error decodeHeader(std::span<const std::uint8_t> bytes, RpcRdmaHeader& out, std::size_t& consumed);

// RFC 8797 connection private data: magic, version, flags, inline sizes.
struct ConnectionParameters {
  std::uint32_t magic = 0xf6ab0e18;
  std::uint8_t version = 1;
  bool remoteInvalidate = false;
  std::uint32_t sendSize = 1024;  // bytes; encoded as (size / 1024) - 1
  std::uint32_t receiveSize = 1024;
};
inline constexpr std::size_t kPrivateDataSize = 8;
void encodePrivateData(const ConnectionParameters& p,
                       std::span<std::uint8_t, kPrivateDataSize> out);
// False when the bytes are not RFC 8797 private data (wrong magic, short);
// the caller then uses the 1024-byte defaults.
bool decodePrivateData(std::span<const std::uint8_t> bytes, ConnectionParameters& out);

}  // namespace nfsrdma::transport::rdma
