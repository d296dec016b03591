#include "client/rpc/RpcClient.h"

#include <random>
#include <vector>

namespace nfsrdma::rpc {

RpcClient::RpcClient(std::unique_ptr<transport::Transport> transport, std::uint32_t program,
                     std::uint32_t version, Credential credential, std::chrono::milliseconds timeout)
    : transport_(std::move(transport)),
      program_(program),
      version_(version),
      credential_(std::move(credential)),
      timeout_(timeout),
      nextXid_(std::random_device{}()) {
  pending_.reserve(256);
  transport_->start(*this);
}

RpcClient::~RpcClient() { shutdown(); }

void RpcClient::shutdown() {
  {
    std::lock_guard lock(mu_);
    if (!broken_) broken_ = makeError(ClientErrc::kShutdown, "rpc on " + transport_->describe());
  }
  transport_->close();
  failAll(makeError(ClientErrc::kShutdown, "rpc on " + transport_->describe()));
}

Error RpcClient::call(std::uint32_t procedure, const ArgsEncoder& encodeArgs, ReplyCallback callback,
                      const CallHints& hints) {
  // The transport copies what it cannot send at once, so one scratch buffer
  // per thread serves every call.
  thread_local std::vector<std::uint8_t> scratch(kMaxCallHead);
  xdr::XdrEncoder enc(scratch);
  const std::uint32_t xid = nextXid_.fetch_add(1, std::memory_order_relaxed);
  encodeCallHeader(enc, CallHeader{xid, program_, version_, procedure}, credential_);
  encodeArgs(enc);
  if (enc.overflowed()) {
    return makeError(ClientErrc::kEncodeOverflow,
                     "encode RPC call (procedure " + std::to_string(procedure) + ")");
  }
  std::array<xdr::ConstBuffer, xdr::XdrEncoder::kMaxSegments> segs{};
  const std::size_t nsegs = enc.segments(segs);
  {
    std::lock_guard lock(mu_);
    if (broken_) return broken_;
    pending_.emplace(xid, Pending{std::move(callback), std::chrono::steady_clock::now() + timeout_});
    inFlight_.store(pending_.size(), std::memory_order_relaxed);
    ++stats_.calls;
    stats_.bytesSent += enc.streamSize();
  }
  Error e = transport_->send(transport::OutgoingMessage{{segs.data(), nsegs}, enc.bulk(), enc.streamSize(), xid,
                                                       {hints.directReplies.data(), hints.directCount},
                                                       hints.maxReplySize});
  if (e) {
    std::lock_guard lock(mu_);
    // A transport failure or shutdown racing this send may already have taken
    // the call out of pending_ and run its callback with the error: that
    // callback is then the one report, and returning e too would report the
    // call twice (Session::issue would release its slot twice).
    if (pending_.erase(xid) == 0) return {};
    inFlight_.store(pending_.size(), std::memory_order_relaxed);
    return e;
  }
  return {};
}

bool RpcClient::takePendingLocked(std::uint32_t xid, Pending& call) {
  auto it = pending_.find(xid);
  if (it == pending_.end()) {
    ++stats_.unknownXids;
    return false;
  }
  call = std::move(it->second);
  pending_.erase(it);
  inFlight_.store(pending_.size(), std::memory_order_relaxed);
  return true;
}

void RpcClient::onMessage(std::span<const std::uint8_t> message, std::span<const std::uint32_t> placed) {
  std::uint32_t xid = 0;
  Pending call;
  {
    std::lock_guard lock(mu_);
    stats_.bytesReceived += message.size();
    if (!peekXid(message, xid)) {
      ++stats_.malformedReplies;
      return;
    }
    if (!takePendingLocked(xid, call)) return;
    ++stats_.replies;
  }
  xdr::XdrDecoder dec(message);
  dec.setPlacedBulk(placed);
  ReplyHeader header;
  Error e = decodeReplyHeader(dec, header);
  if (e && e.code == make_error_code(ClientErrc::kMalformedReply)) {
    std::lock_guard lock(mu_);
    ++stats_.malformedReplies;
  }
  call.callback(e, dec);
}

void RpcClient::onTransportError(const Error& error) {
  {
    std::lock_guard lock(mu_);
    if (!broken_) broken_ = error;
  }
  failAll(error);
}

void RpcClient::onCallError(std::uint32_t xid, const Error& error) {
  Pending call;
  {
    std::lock_guard lock(mu_);
    if (!takePendingLocked(xid, call)) return;
  }
  xdr::XdrDecoder empty({});
  call.callback(error, empty);
}

void RpcClient::failAll(const Error& error) {
  std::unordered_map<std::uint32_t, Pending> failed;
  {
    std::lock_guard lock(mu_);
    failed.swap(pending_);
    inFlight_.store(0, std::memory_order_relaxed);
  }
  xdr::XdrDecoder empty({});
  for (auto& [xid, call] : failed) call.callback(error, empty);
}

void RpcClient::onTick() {
  const auto now = std::chrono::steady_clock::now();
  std::vector<Pending> expired;
  std::vector<std::uint32_t> expiredXids;
  {
    std::lock_guard lock(mu_);
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second.deadline <= now) {
        expiredXids.push_back(it->first);
        expired.push_back(std::move(it->second));
        it = pending_.erase(it);
        ++stats_.timeouts;
        inFlight_.store(pending_.size(), std::memory_order_relaxed);
      } else {
        ++it;
      }
    }
  }
  if (expired.empty()) return;
  // The transport lets go of what it holds for them (RDMA: the server loses access to their buffers).
  for (std::uint32_t xid : expiredXids) transport_->abandon(xid);
  const Error e = makeError(ClientErrc::kTimedOut, "no reply from " + transport_->describe() + " within " +
                                                       std::to_string(timeout_.count()) + " ms");
  xdr::XdrDecoder empty({});
  for (auto& call : expired) call.callback(e, empty);
}

RpcStats RpcClient::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace nfsrdma::rpc
