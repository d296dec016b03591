#include "client/transport/rdma/ChunkPlanner.h"

namespace nfsrdma::transport::rdma {

std::size_t headerSize(std::size_t readSegments, std::size_t writeChunks, bool replyChunk) {
  // xid, version, credits, proc, and the three list terminators / reply flag.
  std::size_t n = 4 * 4 + 3 * 4;
  n += readSegments * (4 + 4 + 16);  // present, position, segment
  n += writeChunks * (4 + 4 + 16);   // present, count, one segment
  if (replyChunk) n += 4 + 16;       // count, one segment (flag counted above)
  return n;
}

ChunkPlan planCall(const CallShape& call, const InlineLimits& limits) {
  ChunkPlan plan;
  std::size_t readData = 0;
  for (std::size_t r : call.readSizes) {
    if (r > kSmallReadInline) {
      plan.writeChunks.push_back(r);
    } else {
      readData += r;
    }
  }
  // What comes back inline: the reply without the READ data sent to Write
  // chunks, behind a transport header that echoes those Write chunks.
  const std::size_t inlineReply = call.maxReplySize + readData;
  const bool replyChunk =
      headerSize(0, plan.writeChunks.size(), false) + inlineReply > limits.receive;
  if (replyChunk) plan.replyChunk = inlineReply;

  std::size_t header = headerSize(0, plan.writeChunks.size(), replyChunk);
  if (header + call.messageSize <= limits.send) {
    plan.kind = CallKind::kInline;
    plan.inlineBytes = call.messageSize;
    plan.headerBytes = header;
    return plan;
  }
  if (!call.bulk.empty()) {
    std::size_t moved = 0;
    for (const auto& b : call.bulk) moved += b.payload.size() + b.padBytes;
    const std::size_t headerWithReads =
        headerSize(call.bulk.size(), plan.writeChunks.size(), replyChunk);
    if (headerWithReads + call.messageSize - moved <= limits.send) {
      plan.kind = CallKind::kReadChunks;
      plan.proc = RdmaProc::kMsg;
      plan.inlineBytes = call.messageSize - moved;
      plan.headerBytes = headerWithReads;
      return plan;
    }
  }
  plan.kind = CallKind::kPositionZero;
  plan.proc = RdmaProc::kNoMsg;
  plan.inlineBytes = 0;
  plan.headerBytes = headerSize(1, plan.writeChunks.size(), replyChunk);
  return plan;
}

}  // namespace nfsrdma::transport::rdma
