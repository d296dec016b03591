#include "client/transport/rdma/RdmaTransport.h"

#include <poll.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "client/transport/NumaPlacement.h"
#include "client/transport/rdma/DeviceNuma.h"
#include "client/transport/rdma/InlineMarshal.h"
#include "verbs/VerbsError.h"

namespace nfsrdma::transport::rdma {
namespace {

// One receive more than the credits asked for: a reply's buffer goes back
// to the device only after the reply is handed up, and by then its credit
// may already carry a new call (RFC 8166 section 3.3.1 wants a receive
// posted for every credit the server may use; xprtrdma keeps spares too).
std::uint32_t receiveCount(const RdmaTransportOptions& o) {
  return o.credits + 1;
}

}  // namespace

std::unique_ptr<RdmaTransport> RdmaTransport::connect(const RdmaTransportOptions& options,
                                                      std::shared_ptr<IoLoop> loop) {
  try {
    return std::unique_ptr<RdmaTransport>(new RdmaTransport(options, std::move(loop)));
  } catch (const verbs::NoDeviceError& e) {
    throw NfsException(makeError(ClientErrc::kNoRdmaDevice, e.what()));
  } catch (const NfsException&) {
    throw;
  } catch (const std::exception& e) {
    throw NfsException(makeError(
        std::make_error_code(std::errc::connection_refused),
        "connect rdma " + options.host + ":" + std::to_string(options.port) + ": " + e.what()));
  }
}

namespace {
// The rdma_cm side of the options, for resolving and connecting alike.
verbs::CmClientOptions cmOptions(const RdmaTransportOptions& o) {
  verbs::CmClientOptions co;
  co.host = o.host;
  co.port = o.port;
  co.bindAddress = o.bindAddress;
  co.timeout = o.timeout;
  co.peerName = "NFS/RDMA server";
  co.rejectedHint = "is knfsd listening for RDMA on that port ('rdma " + std::to_string(o.port) +
                    "' in /proc/fs/nfsd/portlist; nfsrdma-server doctor checks) or nfs-ganesha "
                    "with NFS_RDMA_Port?";
  return co;
}

// Helpers that build the members in order; each throws naming its verb.
verbs::CmId resolvedId(verbs::CmEventChannel& events, const RdmaTransportOptions& o) {
  verbs::CmId id = verbs::CmId::create(events);
  verbs::cmResolve(events, id, cmOptions(o));
  return id;
}
}  // namespace

// The loop's view of the connection, one member per descriptor: the
// completion channel (replies and send completions; it also carries the
// tick) and the connection manager's events (a disconnect). A member
// reports no calls in flight, so the loop's reply pacing (a TCP socket's)
// never waits for RDMA completions: a CQ is polled as soon as it fires.
class RdmaTransport::LoopMember final : public IoLoop::Member {
 public:
  enum class Source { kCompletions, kCmEvents };
  LoopMember(RdmaTransport& t, Source source) : t_(t), source_(source) {}
  int pollFd() const override {
    return source_ == Source::kCompletions ? t_.completionChannel_.get()->fd : t_.events_.get()->fd;
  }
  short pollEvents() const override { return POLLIN; }
  void onEvents(short revents) override {
    if ((revents & POLLIN) == 0) return;
    if (source_ == Source::kCompletions) {
      t_.onCompletionEvent();
    } else {
      t_.onCmEvent();
    }
  }
  void onTick() override {
    if (source_ == Source::kCompletions) t_.sink_->onTick();
  }
  std::size_t takeReplies() override { return 0; }
  std::size_t callsInFlight() const override { return 0; }
  bool inLargeRecord() const override { return false; }

 private:
  RdmaTransport& t_;
  Source source_;
};

RdmaTransport::RdmaTransport(const RdmaTransportOptions& options, std::shared_ptr<IoLoop> loop)
    : options_(options),
      description_("rdma " + options.host + ":" + std::to_string(options.port)),
      events_(verbs::CmEventChannel::create()),
      id_(resolvedId(events_, options)),
      pd_(verbs::ProtectionDomain::allocate(id_.verbs())),
      completionChannel_(verbs::CompletionChannel::create(id_.verbs())),
      cq_(verbs::CompletionQueue::create(
          id_.verbs(), static_cast<int>(receiveCount(options) + options.sendBuffers + 8),
          &completionChannel_)),
      qp_([this, &options] {
        ibv_qp_init_attr attr{};
        attr.send_cq = cq_.get();
        attr.recv_cq = cq_.get();
        attr.qp_type = IBV_QPT_RC;
        attr.cap.max_send_wr = options.sendBuffers + 1;
        attr.cap.max_recv_wr = receiveCount(options);
        attr.cap.max_send_sge = 1;
        attr.cap.max_recv_sge = 1;
        return verbs::QueuePair::createOnCmId(id_.get(), pd_.get(), attr);
      }()),
      receiveBuffers_(verbs::RegisteredBuffer::allocate(
          pd_.get(), std::size_t{receiveCount(options)} * options.inlineSize,
          IBV_ACCESS_LOCAL_WRITE)),
      sendBuffers_(verbs::RegisteredBuffer::allocate(
          pd_.get(), std::size_t{options.sendBuffers} * options.inlineSize,
          IBV_ACCESS_LOCAL_WRITE)),
      window_(options.credits),
      registrations_(makeRegistrationStrategy(
          options.registration, [this](std::uintptr_t start, std::size_t length, unsigned access) {
            return registerRange(start, length, access);
          })) {
  loop_ = loop ? std::move(loop) : std::make_shared<IoLoop>();
  completionMember_ = std::make_unique<LoopMember>(*this, LoopMember::Source::kCompletions);
  cmEventMember_ = std::make_unique<LoopMember>(*this, LoopMember::Source::kCmEvents);
  setUp(options);
}

void RdmaTransport::setUp(const RdmaTransportOptions& options) {
  receiveContexts_.resize(receiveCount(options));
  for (std::size_t i = 0; i < receiveContexts_.size(); ++i) {
    receiveContexts_[i] = {true, i};
    postReceive(i);
  }
  // With no sink yet, fail() could only record it: say it here.
  if (broken_.load()) throw std::runtime_error(failure_);
  sendContexts_.resize(options.sendBuffers);
  for (std::size_t i = 0; i < options.sendBuffers; ++i) {
    sendContexts_[i] = {false, i};
    freeSendSlots_.push_back(options.sendBuffers - 1 - i);
  }
  if (std::error_code ec = cq_.requestNotify()) throw std::system_error(ec, "ibv_req_notify_cq");

  // RFC 8797: announce our inline sizes; without the server's, assume 1024.
  ConnectionParameters ours;
  ours.sendSize = options.inlineSize;
  ours.receiveSize = options.inlineSize;
  std::array<std::uint8_t, kPrivateDataSize> pd{};
  encodePrivateData(ours, pd);
  const auto theirs =
      verbs::cmConnect(events_, id_, std::as_bytes(std::span(pd)), cmOptions(options));
  ConnectionParameters peer;
  const bool announced = decodePrivateData(
      {reinterpret_cast<const std::uint8_t*>(theirs.data()), theirs.size()}, peer);
  const std::uint32_t peerReceives = announced ? peer.receiveSize : 1024;
  const std::uint32_t peerSends = announced ? peer.sendSize : 1024;
  limits_.send = std::min<std::size_t>(peerReceives, options.inlineSize);
  // A reply longer than the server sends inline needs a Reply chunk, even
  // when our receive buffers could hold it.
  limits_.receive = std::min<std::size_t>(peerSends, options.inlineSize);
  stats_.peerReceiveSize = peerReceives;
}

RdmaTransport::~RdmaTransport() {
  close();
}

void RdmaTransport::start(TransportSink& sink) {
  sink_ = &sink;
  if (options_.numaAuto) {
    const std::string device = id_.deviceName();
    loop_->place(rdmaDeviceNumaNode(device), "RDMA device " + device);
  }
  started_ = true;
  loop_->add(*completionMember_);
  loop_->add(*cmEventMember_);
}

void RdmaTransport::close() {
  if (stopping_.exchange(true)) return;
  // From here on the loop does not touch this connection (from a callback
  // on the loop's thread: from the current round on).
  if (started_) {
    loop_->remove(*completionMember_);
    loop_->remove(*cmEventMember_);
  }
  (void)id_.disconnect();
  // Flush everything posted so no completion refers to memory we free next.
  (void)qp_.drain(cq_, cq_, std::chrono::seconds(2));
  std::lock_guard lock(mu_);
  calls_.clear();
}

void RdmaTransport::abandon(std::uint32_t xid) {
  std::unique_ptr<CallChunks> gone;
  {
    std::lock_guard lock(mu_);
    auto it = calls_.find(xid);
    if (it == calls_.end()) return;
    gone = std::move(it->second);
    calls_.erase(it);
    // Still waiting for credits: it must never leave now (its memory is
    // about to go, and the session retired its slot).
    window_.abandon(xid, freeSendSlots_);
  }
  if (gone) registrations_->forget(gone->registrations);
  // Destroying 'gone' deregisters its memory: the server loses access.
}

void RdmaTransport::postReceive(std::size_t slot) {
  ibv_sge sge = receiveBuffers_.sge(slot * options_.inlineSize, options_.inlineSize);
  ibv_recv_wr wr{};
  wr.wr_id = verbs::toWrId(&receiveContexts_[slot]);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  if (std::error_code ec = qp_.postRecv(wr)) {
    fail(makeError(ec, "post receive on " + description_));
  }
}

Registration RdmaTransport::registerRange(std::uintptr_t start, std::size_t length,
                                          unsigned access) {
  int flags = 0;
  if ((access & kRemoteWrite) != 0) flags |= IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  if ((access & kRemoteRead) != 0) flags |= IBV_ACCESS_REMOTE_READ;
  auto mr = std::make_shared<verbs::MemoryRegion>(verbs::MemoryRegion::registerMemory(
      pd_.get(), reinterpret_cast<void*>(start), length, flags));
  {
    std::lock_guard lock(mu_);
    ++stats_.registrations;
  }
  const std::uint32_t rkey = mr->rkey();
  return Registration{start, start + length, access, rkey, std::move(mr)};
}

// The steps of a send, in order: plan the chunks, register the memory they
// expose, take a send buffer, encode the inline part into it, count the
// call and post it (or queue it for a credit).
Error RdmaTransport::send(const OutgoingMessage& message) {
  if (broken_.load() || stopping_.load()) {
    std::lock_guard lock(mu_);
    return makeError(ClientErrc::kConnectionClosed,
                     "send on " + description_ + (failure_.empty() ? "" : " (" + failure_ + ")"));
  }
  const CallPlan p = planChunks(message, limits_);
  auto call = std::make_unique<CallChunks>();
  RpcRdmaHeader h;
  h.xid = message.xid;
  h.credits = options_.credits;
  h.proc = p.chunks.proc;
  std::uint64_t pulled = 0;
  if (Error e = encodeChunkLists(message, p, *call, h, pulled)) return e;
  std::size_t slot = 0;
  if (Error e = takeSendSlot(slot)) return e;
  std::size_t length = 0;
  if (Error e = encodeCall(message, p, h, slot, length)) return e;
  {
    std::lock_guard lock(mu_);
    countCall(p, h, pulled);
    calls_[message.xid] = std::move(call);
  }
  postOrBacklog({slot, static_cast<std::uint32_t>(length), message.xid});
  return {};
}

Error RdmaTransport::encodeChunkLists(const OutgoingMessage& message, const CallPlan& p,
                                      CallChunks& call, RpcRdmaHeader& h, std::uint64_t& pulled) {
  try {
    pulled = encodeReadList(message, p, *registrations_, call, h);
    encodeWriteList(message, p, *registrations_, call, h);
    encodeReplyChunk(p, maxIncoming_.load(), *registrations_, call, h);
  } catch (const std::system_error& e) {
    return makeError(e.code(), std::string("register memory on ") + description_ + ": " + e.what());
  }
  return {};
}

// Under mu_.
void RdmaTransport::countCall(const CallPlan& p, const RpcRdmaHeader& h, std::uint64_t pulled) {
  ++stats_.calls;
  switch (p.chunks.kind) {
    case CallKind::kInline:
      ++stats_.inlineCalls;
      break;
    case CallKind::kReadChunks:
      ++stats_.readChunkCalls;
      break;
    case CallKind::kPositionZero:
      ++stats_.positionZeroCalls;
      break;
  }
  stats_.writeChunks += h.writes.size();
  if (h.hasReply) ++stats_.replyChunks;
  stats_.bytesPulledByServer += pulled;
}

Error RdmaTransport::takeSendSlot(std::size_t& slot) {
  std::lock_guard lock(mu_);
  if (freeSendSlots_.empty()) {
    return makeError(std::make_error_code(std::errc::no_buffer_space),
                     "send on " + description_ + ": all " + std::to_string(options_.sendBuffers) +
                         " send buffers busy");
  }
  slot = freeSendSlots_.back();
  freeSendSlots_.pop_back();
  return {};
}

// Transport header, then the inline part of the RPC message, into the send
// buffer of 'slot'; on an error the slot is free again.
Error RdmaTransport::encodeCall(const OutgoingMessage& message, const CallPlan& p,
                                const RpcRdmaHeader& h, std::size_t slot, std::size_t& length) {
  std::uint8_t* base =
      reinterpret_cast<std::uint8_t*>(sendBuffers_.data()) + slot * options_.inlineSize;
  xdr::XdrEncoder enc({base, options_.inlineSize});
  encodeHeader(enc, h);
  length = enc.headSize();
  if (p.chunks.kind == CallKind::kPositionZero) return {};
  const auto end = enc.overflowed() ? std::nullopt
                                    : marshalInline(message.segments, p.chunked(),
                                                    {base, options_.inlineSize}, length);
  if (!end) {
    std::lock_guard lock(mu_);
    freeSendSlots_.push_back(slot);
    return makeError(ClientErrc::kEncodeOverflow,
                     "send on " + description_ + ": inline part exceeds " +
                         std::to_string(options_.inlineSize) + " bytes");
  }
  length = *end;
  return {};
}

void RdmaTransport::postOrBacklog(PendingSend send) {
  {
    std::lock_guard lock(mu_);
    if (!window_.admit(send)) {
      ++stats_.backlogged;
      return;
    }
  }
  post(send);
}

void RdmaTransport::post(const PendingSend& send) {
  ibv_sge sge = sendBuffers_.sge(send.slot * options_.inlineSize, send.length);
  ibv_send_wr wr{};
  wr.wr_id = verbs::toWrId(&sendContexts_[send.slot]);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  if (std::error_code ec = qp_.postSend(wr)) fail(makeError(ec, "post send on " + description_));
}

void RdmaTransport::fail(const Error& e) {
  {
    std::lock_guard lock(mu_);
    if (failure_.empty()) failure_ = e.message();
  }
  if (broken_.exchange(true)) return;
  // No more remote access to our memory once we report the failure.
  (void)qp_.moveToError();
  if (sink_ != nullptr) sink_->onTransportError(e);
}

void RdmaTransport::onCompletionEvent() {
  if (stopping_.load()) return;
  (void)cq_.waitEvent(std::chrono::milliseconds(0));  // ack and re-arm
  pollCompletions();
}

void RdmaTransport::onCmEvent() {
  if (stopping_.load()) return;
  try {
    if (auto ev = events_.wait(std::chrono::milliseconds(0))) {
      if (ev->type() == RDMA_CM_EVENT_DISCONNECTED || ev->type() == RDMA_CM_EVENT_DEVICE_REMOVAL) {
        fail(makeError(ClientErrc::kConnectionClosed, description_ + ": " + ev->describe()));
      }
    }
  } catch (const std::exception& e) {
    fail(makeError(ClientErrc::kConnectionClosed, description_ + ": " + e.what()));
  }
}

void RdmaTransport::pollCompletions() {
  std::array<ibv_wc, 32> wcs{};
  // Bounded: at most this many batches per wakeup, then back to poll().
  for (int round = 0; round < 64; ++round) {
    const verbs::PollResult r = cq_.poll(wcs);
    if (r.error) {
      fail(makeError(r.error, "poll completion queue on " + description_));
      return;
    }
    if (r.count == 0) return;
    for (std::size_t i = 0; i < r.count; ++i) {
      const ibv_wc& wc = wcs[i];
      auto* ctx = verbs::fromWrId<WorkContext>(wc.wr_id);
      if (wc.status != IBV_WC_SUCCESS) {
        const std::error_code ec = verbs::makeCompletionError(static_cast<int>(wc.status));
        {
          std::lock_guard lock(mu_);
          ++stats_.completionErrors[ec.message()];
        }
        if (!stopping_.load())
          fail(makeError(ec, description_ + (ctx->receive ? " receive" : " send")));
        continue;
      }
      if (ctx->receive) {
        onReceive(ctx->slot, wc.byte_len);
      } else {
        std::lock_guard lock(mu_);
        freeSendSlots_.push_back(ctx->slot);
      }
    }
  }
}

// The steps of a receive, in order: decode the transport header, take the
// call it answers (and the credit grant it carries), hand the reply up,
// repost the buffer, and start calls the freed credits let go.
void RdmaTransport::onReceive(std::size_t slot, std::uint32_t length) {
  const auto* base =
      reinterpret_cast<const std::uint8_t*>(receiveBuffers_.data()) + slot * options_.inlineSize;
  std::span<const std::uint8_t> bytes(base, std::min<std::size_t>(length, options_.inlineSize));
  RpcRdmaHeader h;
  std::size_t consumed = 0;
  Error e = decodeHeader(bytes, h, consumed);
  if (e) {
    // Which connection and, once the header got that far, which call: an
    // ERR_CHUNK or a bad header is otherwise hard to tie to a request.
    e.context = description_ +
                (bytes.size() >= 4 ? ": reply header for xid " + std::to_string(h.xid) : "") +
                ": " + e.context;
  }
  // Held until the end: a reply in its Reply chunk lives in its memory.
  const std::unique_ptr<CallChunks> call = takeAnsweredCall(h);
  if (e) {
    if (h.proc == RdmaProc::kError && call) {
      sink_->onCallError(h.xid, e);
    } else if (h.proc != RdmaProc::kError) {
      fail(e);
      return;
    }
  } else if (!call) {
    // A reply to a call we no longer track (abandoned after a timeout): the
    // RPC layer counts and drops it. Unless the RPC reply inside names
    // another XID: that could complete a call whose chunks we still hold.
    const std::span<const std::uint8_t> inner = bytes.subspan(consumed);
    std::uint32_t rpcXid = 0;
    if (h.proc == RdmaProc::kMsg && peekXid(inner, rpcXid) && rpcXid == h.xid) {
      sink_->onMessage(inner, {});
    }
  } else {
    deliverReply(h, *call, bytes.subspan(consumed));
  }
  postReceive(slot);
  startBacklogged();
}

std::unique_ptr<CallChunks> RdmaTransport::takeAnsweredCall(const RpcRdmaHeader& h) {
  std::unique_ptr<CallChunks> call;
  std::lock_guard lock(mu_);
  auto it = calls_.find(h.xid);
  if (it != calls_.end()) {
    call = std::move(it->second);
    calls_.erase(it);
  }
  window_.onReply(h.xid, h.credits, call != nullptr);
  stats_.creditsGranted = window_.granted();
  return call;
}

// A well-formed reply to a call in flight: its RPC message (inline, or in
// the Reply chunk) goes up with the lengths placed in its Write chunks, or
// the call fails if the server broke the chunks' contract.
void RdmaTransport::deliverReply(const RpcRdmaHeader& h, const CallChunks& call,
                                 std::span<const std::uint8_t> inner) {
  std::span<const std::uint8_t> message = inner;
  if (h.proc != RdmaProc::kMsg) {
    std::size_t replyLength = 0;
    for (const auto& s : h.reply) replyLength += s.length;
    if (!h.hasReply || replyLength == 0 || call.replyMemory.empty() ||
        replyLength > call.replyMemory.size()) {
      sink_->onCallError(
          h.xid, makeError(ClientErrc::kMalformedReply,
                           description_ + ": RDMA_NOMSG reply of " + std::to_string(replyLength) +
                               " bytes without a Reply chunk large enough"));
      return;
    }
    message = {call.replyMemory.data(), replyLength};
  }
  // The RPC reply inside must be for the call the header names: the Write
  // chunk lengths below belong to that call alone.
  std::uint32_t rpcXid = 0;
  if (!peekXid(message, rpcXid) || rpcXid != h.xid) {
    sink_->onCallError(
        h.xid, makeError(ClientErrc::kMalformedReply, description_ + ": transport header for xid " +
                                                          std::to_string(h.xid) +
                                                          " carries an RPC reply for another xid"));
    return;
  }
  std::array<std::uint32_t, 4> placed{};
  std::size_t nplaced = 0;
  std::uint64_t pushed = 0;
  for (std::size_t i = 0; i < h.writes.size() && i < call.directCount; ++i) {
    std::uint64_t n = 0;
    for (const auto& s : h.writes[i]) n += s.length;
    if (n > call.directSizes[i]) {
      // More than we offered: the server wrote past what we registered for it.
      sink_->onCallError(
          h.xid, makeError(ClientErrc::kMalformedReply,
                           description_ + ": Write chunk " + std::to_string(i) + " of xid " +
                               std::to_string(h.xid) + " reports " + std::to_string(n) +
                               " bytes, " + std::to_string(call.directSizes[i]) + " offered"));
      return;
    }
    placed[nplaced++] = static_cast<std::uint32_t>(n);
    pushed += n;
  }
  {
    std::lock_guard lock(mu_);
    stats_.bytesPushedByServer += pushed;
  }
  sink_->onMessage(message, {placed.data(), nplaced});
}

// Credits freed by a reply go to calls waiting in the backlog.
void RdmaTransport::startBacklogged() {
  // A waiting call no longer in calls_ was abandoned between send()'s two steps.
  const auto live = [this](std::uint32_t xid) { return calls_.count(xid) != 0; };
  for (int i = 0; i < 1024; ++i) {
    std::optional<PendingSend> next;
    {
      std::lock_guard lock(mu_);
      next = window_.nextToPost(live, freeSendSlots_);
    }
    if (!next) break;
    post(*next);
  }
}

std::uint32_t RdmaTransport::callLimit() const {
  std::lock_guard lock(mu_);
  return window_.granted();
}

std::string RdmaTransport::statsLine() const {
  const RdmaStats s = stats();
  std::string line = "xprt: rdma " + options_.host + ":" + std::to_string(options_.port) +
                     " calls=" + std::to_string(s.calls) +
                     " inline=" + std::to_string(s.inlineCalls) +
                     " read_chunk_calls=" + std::to_string(s.readChunkCalls) +
                     " nomsg_calls=" + std::to_string(s.positionZeroCalls) +
                     " write_chunks=" + std::to_string(s.writeChunks) +
                     " reply_chunks=" + std::to_string(s.replyChunks) +
                     " rdma_read_bytes=" + std::to_string(s.bytesPulledByServer) +
                     " rdma_write_bytes=" + std::to_string(s.bytesPushedByServer) +
                     " credits=" + std::to_string(s.creditsGranted) +
                     " backlogged=" + std::to_string(s.backlogged) +
                     " registrations=" + std::to_string(s.registrations) +
                     " peer_inline=" + std::to_string(s.peerReceiveSize) +
                     " memreg=" + memoryRegistrationName(registrations_->kind());
  for (const auto& [status, n] : s.completionErrors)
    line += " completion_error[" + status + "]=" + std::to_string(n);
  if (options_.numaAuto) {
    const NumaPlacement p = loop_->placement();
    line += p.detail.empty() ? " numa=pending" : p.statsField();
  }
  return line;
}

RdmaStats RdmaTransport::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace nfsrdma::transport::rdma
