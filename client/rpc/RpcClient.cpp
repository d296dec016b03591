#include "client/rpc/RpcClient.h"

#include <random>
#include <vector>

#include "client/transport/IoLoop.h"

namespace nfsrdma::rpc {

RpcClient::RpcClient(std::unique_ptr<transport::Transport> transport, std::uint32_t program,
                     std::uint32_t version, Credential credential,
                     std::chrono::milliseconds timeout)
    : transport_(std::move(transport)),
      program_(program),
      version_(version),
      credential_(std::move(credential)),
      timeout_(timeout),
      nextXid_(std::random_device{}()) {
  pending_.reserve(256);
  transport_->start(*this);
}

RpcClient::~RpcClient() {
  shutdown();
}

void RpcClient::shutdown() {
  const Error e = makeError(ClientErrc::kShutdown, "rpc on " + describe());
  {
    std::lock_guard lock(mu_);
    shutDown_ = true;
    broken_ = e;
  }
  // No reconnect() can replace the transport from here on (it checks
  // shutDown_ first, and its owner stops calling it before shutting down).
  transport::Transport* t = nullptr;
  {
    std::shared_lock lock(transportMu_);
    t = transport_.get();
  }
  t->close();
  failAll(e);
}

void RpcClient::setReconnect(TransportFactory factory) {
  std::lock_guard lock(mu_);
  factory_ = std::move(factory);
}

bool RpcClient::canReconnect() const {
  std::lock_guard lock(mu_);
  return factory_ != nullptr && !shutDown_;
}

bool RpcClient::connectionLost() const {
  std::lock_guard lock(mu_);
  return broken_.code == make_error_code(ClientErrc::kConnectionLost);
}

namespace {

// An NfsException's error again: its code, and its text without the code's
// message that what() ends with.
Error errorOf(const NfsException& e) {
  std::string text = e.what();
  const std::string suffix = ": " + e.code().message();
  if (text.size() > suffix.size() &&
      text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0) {
    text.resize(text.size() - suffix.size());
  }
  return makeError(e.code(), std::move(text));
}

}  // namespace

Error RpcClient::reconnect() {
  if (onIoThread()) {
    return makeError(ClientErrc::kInvalidArgument,
                     "reconnect to " + describe() + " from its I/O thread");
  }
  TransportFactory factory;
  {
    std::lock_guard lock(mu_);
    if (shutDown_) return broken_;
    factory = factory_;
    // No call goes out until the new connection has started.
    if (factory && !broken_) broken_ = makeError(ClientErrc::kConnectionLost, "reconnecting");
  }
  if (!factory)
    return makeError(ClientErrc::kInvalidArgument, "no way to reconnect to " + describe());
  transport::Transport* old = nullptr;
  {
    std::shared_lock lock(transportMu_);
    old = transport_.get();
  }
  // Its I/O thread ends here: nothing it delivers can race what follows.
  old->close();
  failAll(makeError(ClientErrc::kConnectionLost, "reconnecting to " + describe()));
  std::unique_ptr<transport::Transport> fresh;
  try {
    fresh = factory();
  } catch (const NfsException& e) {
    return errorOf(e);
  }
  {
    std::lock_guard lock(mu_);
    if (shutDown_) return broken_;
    currentFailed_ = false;
  }
  {
    std::unique_lock lock(transportMu_);
    if (maxIncoming_ != 0) fresh->setMaxIncomingMessage(maxIncoming_);
    fresh.swap(transport_);  // fresh now holds the old, closed transport
  }
  transport_->start(*this);
  std::lock_guard lock(mu_);
  ++stats_.reconnects;
  // A new connection that failed at once keeps broken_ as it said.
  if (!currentFailed_ && !shutDown_) broken_ = {};
  return broken_;
}

void RpcClient::setMaxIncomingMessage(std::size_t bytes) {
  std::shared_lock lock(transportMu_);
  maxIncoming_ = bytes;
  transport_->setMaxIncomingMessage(bytes);
}

std::uint64_t RpcClient::deliveryRound() {
  return transport::IoLoop::currentRound();
}

bool RpcClient::corksRounds() const {
  std::shared_lock lock(transportMu_);
  return transport_->corksRounds();
}

bool RpcClient::onIoThread() const {
  std::shared_lock lock(transportMu_);
  return transport_->onIoThread();
}

std::string RpcClient::describe() const {
  std::shared_lock lock(transportMu_);
  return transport_->describe();
}

std::string RpcClient::transportStats() const {
  std::shared_lock lock(transportMu_);
  return transport_->statsLine();
}

std::uint32_t RpcClient::transportCallLimit() const {
  std::shared_lock lock(transportMu_);
  return transport_->callLimit();
}

Error RpcClient::call(std::uint32_t procedure, const ArgsEncoder& encodeArgs,
                      ReplyCallback callback, const CallHints& hints) {
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
    pending_.emplace(xid,
                     Pending{std::move(callback), std::chrono::steady_clock::now() + timeout_});
    inFlight_.store(pending_.size(), std::memory_order_relaxed);
    ++stats_.calls;
    stats_.bytesSent += enc.streamSize();
  }
  Error e;
  {
    std::shared_lock t(transportMu_);
    e = transport_->send(transport::OutgoingMessage{{segs.data(), nsegs},
                                                    enc.bulk(),
                                                    enc.streamSize(),
                                                    xid,
                                                    {hints.directReplies.data(), hints.directCount},
                                                    hints.maxReplySize});
  }
  if (e) {
    std::lock_guard lock(mu_);
    // A transport failure or shutdown racing this send may already have taken
    // the call out of pending_ and run its callback with the error: that
    // callback is then the one report, and returning e too would report the
    // call twice (Session::issue would release its slot twice).
    if (pending_.erase(xid) == 0) return {};
    inFlight_.store(pending_.size(), std::memory_order_relaxed);
    // A send the connection failed (or refused, being broken already) may
    // have left part or all of the call on the wire: the session resends it
    // on its slot, on the next connection.
    const bool connectionFailed = e.code.category() == std::generic_category() ||
                                  e.code == make_error_code(ClientErrc::kConnectionClosed);
    if (broken_.code == make_error_code(ClientErrc::kConnectionLost)) return broken_;
    if (connectionFailed && !shutDown_) return makeError(ClientErrc::kConnectionLost, e.message());
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

void RpcClient::onMessage(std::span<const std::uint8_t> message,
                          std::span<const std::uint32_t> placed) {
  std::uint32_t xid = 0;
  Pending call;
  {
    std::lock_guard lock(mu_);
    stats_.bytesReceived += message.size();
    if (!transport::peekXid(message, xid)) {
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
  // Calls its callback makes know which connection they came from (a
  // trunked session keeps them there: nfs4/Session.h).
  const RpcClient* outer = tlsDelivering_;
  tlsDelivering_ = this;
  call.callback(e, dec);
  tlsDelivering_ = outer;
}

void RpcClient::onTransportError(const Error& error) {
  Error lost = error;
  {
    std::lock_guard lock(mu_);
    currentFailed_ = true;
    // A server that broke the protocol (an oversized record, bytes that
    // are no RPC) would do it again on a new connection: that error stands.
    const bool protocolError = error.code == make_error_code(ClientErrc::kRecordTooLarge) ||
                               error.code == make_error_code(ClientErrc::kMalformedReply);
    if (!shutDown_ && !protocolError) {
      // The calls in flight may or may not have run: kConnectionLost says
      // so to the session, which can resend them on their slots.
      lost = makeError(ClientErrc::kConnectionLost, error.message());
      ++stats_.connectionsLost;
    }
    if (!broken_) broken_ = lost;
  }
  failAll(lost);
}

void RpcClient::presumeDead(const std::string& why) {
  const Error lost = makeError(ClientErrc::kConnectionLost, why);
  {
    std::lock_guard lock(mu_);
    if (factory_ == nullptr || shutDown_ || currentFailed_) return;
    currentFailed_ = true;
    broken_ = lost;
    ++stats_.connectionsLost;
  }
  // Closed now, not at the reconnect: a late reply on it must not land in
  // a caller's buffer (TCP direct placement, an RDMA Write chunk) after
  // the call was answered over another connection.
  {
    std::shared_lock lock(transportMu_);
    transport_->close();
  }
  failAll(lost);
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
  // The transport lets go of what it holds for them (RDMA: the server loses access to their
  // buffers).
  {
    std::shared_lock lock(transportMu_);
    for (std::uint32_t xid : expiredXids) transport_->abandon(xid);
  }
  const Error e = makeError(ClientErrc::kTimedOut, "no reply from " + describe() + " within " +
                                                       std::to_string(timeout_.count()) + " ms");
  xdr::XdrDecoder empty({});
  for (auto& call : expired) call.callback(e, empty);
}

RpcStats RpcClient::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace nfsrdma::rpc
