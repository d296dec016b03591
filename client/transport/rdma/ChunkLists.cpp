#include "client/transport/rdma/ChunkLists.h"

#include <algorithm>
#include <cstring>

namespace nfsrdma::transport::rdma {
namespace {

Segment segmentFor(const Registration& reg, const std::uint8_t* data, std::size_t length) {
  return {reg.rkey, static_cast<std::uint32_t>(length), reinterpret_cast<std::uintptr_t>(data)};
}

}  // namespace

std::span<const xdr::BulkSegment> CallPlan::chunked() const {
  if (chunks.kind != CallKind::kReadChunks) return {};
  return {bulk.data(), bulkCount};
}

CallPlan planChunks(const OutgoingMessage& message, const InlineLimits& limits) {
  CallPlan p;
  for (const auto& b : message.bulk) {
    if (!b.payload.empty() && p.bulkCount < p.bulk.size()) p.bulk[p.bulkCount++] = b;
  }
  p.reads = std::min<std::size_t>(message.directReplies.size(), p.readSizes.size());
  for (std::size_t i = 0; i < p.reads; ++i) p.readSizes[i] = message.directReplies[i].size();
  const std::size_t replyHint =
      message.maxReplySize != 0 ? message.maxReplySize : limits.receive / 2;
  p.chunks = planCall(
      {message.size, {p.bulk.data(), p.bulkCount}, {p.readSizes.data(), p.reads}, replyHint},
      limits);
  return p;
}

std::uint64_t encodeReadList(const OutgoingMessage& message, const CallPlan& p,
                             RegistrationStrategy& registrations, CallChunks& call,
                             RpcRdmaHeader& h) {
  std::uint64_t pulled = 0;
  if (p.chunks.kind == CallKind::kReadChunks) {
    for (const auto& b : p.chunked()) {
      auto reg = registrations.acquire(b.payload.data(), b.payload.size(), kRemoteRead, false);
      h.reads.push_back({static_cast<std::uint32_t>(b.xdrPosition),
                         segmentFor(*reg, b.payload.data(), b.payload.size())});
      call.registrations.push_back(std::move(reg));
      pulled += b.payload.size();
    }
  } else if (p.chunks.kind == CallKind::kPositionZero) {
    call.positionZeroMemory.resize(message.size);
    std::size_t at = 0;
    for (const auto& s : message.segments) {
      std::memcpy(call.positionZeroMemory.data() + at, s.data, s.size);
      at += s.size;
    }
    const std::uint8_t* body = call.positionZeroMemory.data();
    auto reg = registrations.acquire(body, message.size, kRemoteRead, true);
    h.reads.push_back({0, segmentFor(*reg, body, message.size)});
    call.registrations.push_back(std::move(reg));
    pulled += message.size;
  }
  return pulled;
}

void encodeWriteList(const OutgoingMessage& message, const CallPlan& p,
                     RegistrationStrategy& registrations, CallChunks& call, RpcRdmaHeader& h) {
  std::size_t chunk = 0;
  for (std::size_t i = 0; i < p.reads && chunk < p.chunks.writeChunks.size(); ++i) {
    if (p.readSizes[i] <= kSmallReadInline) continue;
    auto target = message.directReplies[i];
    auto reg = registrations.acquire(target.data(), target.size(), kRemoteWrite, false);
    h.writes.push_back({segmentFor(*reg, target.data(), target.size())});
    call.directSizes[call.directCount++] = target.size();
    call.registrations.push_back(std::move(reg));
    ++chunk;
  }
}

void encodeReplyChunk(const CallPlan& p, std::size_t maxIncoming,
                      RegistrationStrategy& registrations, CallChunks& call, RpcRdmaHeader& h) {
  if (p.chunks.replyChunk == 0) return;
  call.replyMemory.resize(std::min(p.chunks.replyChunk, maxIncoming) + 1024);
  const std::uint8_t* target = call.replyMemory.data();
  auto reg = registrations.acquire(target, call.replyMemory.size(), kRemoteWrite, true);
  h.hasReply = true;
  h.reply.push_back(segmentFor(*reg, target, call.replyMemory.size()));
  call.registrations.push_back(std::move(reg));
}

}  // namespace nfsrdma::transport::rdma
