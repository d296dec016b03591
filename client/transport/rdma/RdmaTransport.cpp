#include "client/transport/rdma/RdmaTransport.h"

#include "client/rpc/RpcMessage.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "verbs/VerbsError.h"

namespace nfsrdma::transport::rdma {
namespace {

constexpr std::size_t kMaxPooledRegistrations = 4096;

// One receive more than the credits asked for: a reply's buffer goes back
// to the device only after the reply is handed up, and by then its credit
// may already carry a new call (RFC 8166 section 3.3.1 wants a receive
// posted for every credit the server may use; xprtrdma keeps spares too).
std::uint32_t receiveCount(const RdmaTransportOptions& o) {
  return o.credits + 1;
}
constexpr std::uintptr_t kPage = 4096;

}  // namespace

struct RdmaTransport::Registration {
  std::uintptr_t start = 0;
  std::uintptr_t end = 0;
  int access = 0;
  verbs::MemoryRegion mr;
  std::uint32_t rkey() const { return mr.rkey(); }
};

struct RdmaTransport::CallState {
  std::vector<std::shared_ptr<Registration>> registrations;  // keeps caller memory registered
  std::vector<std::uint8_t> replyMemory;                     // Reply chunk target
  std::vector<std::uint8_t> positionZeroMemory;              // RDMA_NOMSG call body
  std::array<std::size_t, 4> directSizes{};
  std::size_t directCount = 0;
};

struct RdmaTransport::PendingSend {
  std::size_t slot = 0;
  std::uint32_t length = 0;
  std::uint32_t xid = 0;  // a call abandoned while it waited is never sent
};

std::unique_ptr<RdmaTransport> RdmaTransport::connect(const RdmaTransportOptions& options) {
  try {
    return std::unique_ptr<RdmaTransport>(new RdmaTransport(options));
  } catch (const verbs::NoDeviceError& e) {
    throw NfsException(makeError(ClientErrc::kNoRdmaDevice, e.what()));
  } catch (const NfsException&) {
    throw;
  } catch (const std::exception& e) {
    throw NfsException(makeError(std::make_error_code(std::errc::connection_refused),
                                 "connect rdma " + options.host + ":" + std::to_string(options.port) + ": " +
                                     e.what()));
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

RdmaTransport::RdmaTransport(const RdmaTransportOptions& options)
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
          IBV_ACCESS_LOCAL_WRITE)) {
  wakeFd_.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wakeFd_) throw std::system_error(errno, std::generic_category(), "eventfd");
  setUp(options);  // if it throws, wakeFd_ (a member, already built) closes itself
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
  thread_ = std::thread([this] { run(); });
}

void RdmaTransport::wake() {
  std::uint64_t one = 1;
  (void)!::write(wakeFd_.get(), &one, sizeof one);
}

void RdmaTransport::close() {
  if (stopping_.exchange(true)) return;
  wake();
  if (thread_.joinable()) {
    if (std::this_thread::get_id() == thread_.get_id()) {
      thread_.detach();
    } else {
      thread_.join();
    }
  }
  (void)id_.disconnect();
  // Flush everything posted so no completion refers to memory we free next.
  (void)qp_.drain(cq_, cq_, std::chrono::seconds(2));
  std::lock_guard lock(mu_);
  calls_.clear();
}

void RdmaTransport::abandon(std::uint32_t xid) {
  std::unique_ptr<CallState> gone;
  {
    std::lock_guard lock(mu_);
    auto it = calls_.find(xid);
    if (it == calls_.end()) return;
    gone = std::move(it->second);
    calls_.erase(it);
    // Still waiting for credits: it must never leave now (its memory is
    // about to go, and the session retired its slot).
    bool queued = false;
    for (auto b = backlog_.begin(); b != backlog_.end();) {
      if (b->xid == xid) {
        freeSendSlots_.push_back(b->slot);
        b = backlog_.erase(b);
        queued = true;
      } else {
        ++b;
      }
    }
    if (!queued) abandonedSent_.insert(xid);
  }
  if (gone && options_.registration == MemoryRegistration::kPooled) {
    // Out of the pool too, so dropping 'gone' below deregisters these as in
    // per-io mode: the caller may reuse its buffer once told of the timeout,
    // and a late reply must not be able to write into it. (Pages another call
    // in flight uses stay registered until that call ends.)
    std::lock_guard lock(poolMu_);
    for (const auto& reg : gone->registrations) {
      auto it = pool_.find(reg->start);
      if (it != pool_.end() && it->second == reg) pool_.erase(it);
    }
  }
  // Destroying 'gone' deregisters per-call memory: the server loses access.
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

std::shared_ptr<RdmaTransport::Registration> RdmaTransport::registerBuffer(const std::uint8_t* data,
                                                                           std::size_t length,
                                                                           bool remoteWrite,
                                                                           bool ownMemory) {
  const auto addr = reinterpret_cast<std::uintptr_t>(data);
  // Only the access the chunk needs: a WRITE's source may be read-only
  // memory (a PROT_READ mapping), which cannot be registered for remote write.
  const int need =
      remoteWrite ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE : IBV_ACCESS_REMOTE_READ;
  auto make = [&](std::uintptr_t start, std::uintptr_t end, int access) {
    auto r = std::make_shared<Registration>(
        Registration{start, end, access,
                     verbs::MemoryRegion::registerMemory(pd_.get(), reinterpret_cast<void*>(start),
                                                         end - start, access)});
    std::lock_guard lock(mu_);
    ++stats_.registrations;
    return r;
  };
  // Exactly these bytes: the server can reach neither the rest of the page
  // nor, for our own short-lived buffers, pages a pooled entry pinned for a
  // caller buffer that was freed since (the pool is keyed by address).
  if (options_.registration == MemoryRegistration::kPerIo || ownMemory)
    return make(addr, addr + length, need);
  // Pooled entries serve any later use of the same pages: whole pages, with
  // the union of the accesses asked of them so far.
  const std::uintptr_t start = addr & ~(kPage - 1);
  const std::uintptr_t end = (addr + length + kPage - 1) & ~(kPage - 1);
  std::lock_guard lock(poolMu_);
  int access = need;
  auto it = pool_.upper_bound(start);
  if (it != pool_.begin()) {
    --it;
    if (it->second->start <= start && it->second->end >= end) {
      if ((it->second->access & need) == need) return it->second;
      access |= it->second->access;
    }
  }
  if (pool_.size() >= kMaxPooledRegistrations) {
    for (auto e = pool_.begin(); e != pool_.end();) {
      e = e->second.use_count() == 1 ? pool_.erase(e) : std::next(e);
    }
  }
  auto r = make(start, end, access);
  pool_[start] = r;
  return r;
}

// What send() works out before it registers anything: the bulk payloads that
// may go as Read chunks, the sizes of the READs whose data could be placed,
// and the planner's choice. On the stack, as before the steps were split.
struct RdmaTransport::SendPlan {
  std::array<xdr::BulkSegment, xdr::XdrEncoder::kMaxBulk> bulk{};
  std::size_t bulkCount = 0;
  std::array<std::size_t, 4> readSizes{};
  std::size_t reads = 0;
  ChunkPlan chunks;
};

// The steps of a send, in order: plan the chunks, register the memory they
// expose, take a send buffer, encode the inline part into it, count the
// call and post it (or queue it for a credit).
Error RdmaTransport::send(const OutgoingMessage& message) {
  if (broken_.load() || stopping_.load()) {
    std::lock_guard lock(mu_);
    return makeError(ClientErrc::kConnectionClosed,
                     "send on " + description_ + (failure_.empty() ? "" : " (" + failure_ + ")"));
  }
  SendPlan p;
  planSend(message, p);

  auto call = std::make_unique<CallState>();
  RpcRdmaHeader h;
  h.xid = message.xid;
  h.credits = options_.credits;
  h.proc = p.chunks.proc;
  std::uint64_t pulled = 0;
  try {
    pulled = addReadChunks(message, p, *call, h);
    addWriteChunks(message, p, *call, h);
    addReplyChunk(p, *call, h);
  } catch (const std::system_error& e) {
    return makeError(e.code(), std::string("register memory on ") + description_ + ": " + e.what());
  }

  std::size_t slot = 0;
  if (Error e = takeSendSlot(slot)) return e;
  std::size_t length = 0;
  if (Error e = encodeCall(message, p, h, slot, length)) return e;
  {
    std::lock_guard lock(mu_);
    ++stats_.calls;
    switch (p.chunks.kind) {
      case CallKind::kInline: ++stats_.inlineCalls; break;
      case CallKind::kReadChunks: ++stats_.readChunkCalls; break;
      case CallKind::kPositionZero: ++stats_.positionZeroCalls; break;
    }
    stats_.writeChunks += h.writes.size();
    if (h.hasReply) ++stats_.replyChunks;
    stats_.bytesPulledByServer += pulled;
    calls_[message.xid] = std::move(call);
  }
  postOrBacklog({slot, static_cast<std::uint32_t>(length), message.xid});
  return {};
}

void RdmaTransport::planSend(const OutgoingMessage& message, SendPlan& p) const {
  for (const auto& b : message.bulk) {
    if (!b.payload.empty() && p.bulkCount < p.bulk.size()) p.bulk[p.bulkCount++] = b;
  }
  p.reads = std::min<std::size_t>(message.directReplies.size(), p.readSizes.size());
  for (std::size_t i = 0; i < p.reads; ++i) p.readSizes[i] = message.directReplies[i].size();
  const std::size_t replyHint =
      message.maxReplySize != 0 ? message.maxReplySize : limits_.receive / 2;
  p.chunks = planCall(
      {message.size, {p.bulk.data(), p.bulkCount}, {p.readSizes.data(), p.reads}, replyHint},
      limits_);
}

std::uint64_t RdmaTransport::addReadChunks(const OutgoingMessage& message, const SendPlan& p,
                                           CallState& call, RpcRdmaHeader& h) {
  std::uint64_t pulled = 0;
  if (p.chunks.kind == CallKind::kReadChunks) {
    for (std::size_t i = 0; i < p.bulkCount; ++i) {
      const auto& b = p.bulk[i];
      auto reg = registerBuffer(b.payload.data(), b.payload.size(), false);
      h.reads.push_back({static_cast<std::uint32_t>(b.xdrPosition),
                         {reg->rkey(), static_cast<std::uint32_t>(b.payload.size()),
                          reinterpret_cast<std::uintptr_t>(b.payload.data())}});
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
    auto reg = registerBuffer(call.positionZeroMemory.data(), message.size, false, true);
    h.reads.push_back({0,
                       {reg->rkey(), static_cast<std::uint32_t>(message.size),
                        reinterpret_cast<std::uintptr_t>(call.positionZeroMemory.data())}});
    call.registrations.push_back(std::move(reg));
    pulled += message.size;
  }
  return pulled;
}

void RdmaTransport::addWriteChunks(const OutgoingMessage& message, const SendPlan& p,
                                   CallState& call, RpcRdmaHeader& h) {
  std::size_t chunk = 0;
  for (std::size_t i = 0; i < p.reads && chunk < p.chunks.writeChunks.size(); ++i) {
    if (p.readSizes[i] <= kSmallReadInline) continue;
    auto target = message.directReplies[i];
    auto reg = registerBuffer(target.data(), target.size(), true);
    h.writes.push_back({{reg->rkey(), static_cast<std::uint32_t>(target.size()),
                         reinterpret_cast<std::uintptr_t>(target.data())}});
    call.directSizes[call.directCount++] = target.size();
    call.registrations.push_back(std::move(reg));
    ++chunk;
  }
}

void RdmaTransport::addReplyChunk(const SendPlan& p, CallState& call, RpcRdmaHeader& h) {
  if (p.chunks.replyChunk == 0) return;
  call.replyMemory.resize(std::min(p.chunks.replyChunk, maxIncoming_.load()) + 1024);
  auto reg = registerBuffer(call.replyMemory.data(), call.replyMemory.size(), true, true);
  h.hasReply = true;
  h.reply.push_back({reg->rkey(), static_cast<std::uint32_t>(call.replyMemory.size()),
                     reinterpret_cast<std::uintptr_t>(call.replyMemory.data())});
  call.registrations.push_back(std::move(reg));
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
Error RdmaTransport::encodeCall(const OutgoingMessage& message, const SendPlan& p,
                                const RpcRdmaHeader& h, std::size_t slot, std::size_t& length) {
  std::uint8_t* base =
      reinterpret_cast<std::uint8_t*>(sendBuffers_.data()) + slot * options_.inlineSize;
  xdr::XdrEncoder enc({base, options_.inlineSize});
  encodeHeader(enc, h);
  length = enc.headSize();
  if (p.chunks.kind == CallKind::kPositionZero) return {};
  std::size_t skipPad = 0;
  for (const auto& s : message.segments) {
    const std::uint8_t* data = s.data;
    std::size_t size = s.size;
    bool isBulk = false;
    if (p.chunks.kind == CallKind::kReadChunks) {
      for (std::size_t i = 0; i < p.bulkCount; ++i) {
        if (p.bulk[i].payload.data() == data && p.bulk[i].payload.size() == size) {
          isBulk = true;
          skipPad = p.bulk[i].padBytes;  // the pad after a chunked item is not sent
        }
      }
    }
    if (isBulk) continue;
    const std::size_t drop = std::min(skipPad, size);
    data += drop;
    size -= drop;
    skipPad = 0;
    if (enc.overflowed() || length + size > options_.inlineSize) {
      std::lock_guard lock(mu_);
      freeSendSlots_.push_back(slot);
      return makeError(ClientErrc::kEncodeOverflow,
                       "send on " + description_ + ": inline part exceeds " +
                           std::to_string(options_.inlineSize) + " bytes");
    }
    std::memcpy(base + length, data, size);
    length += size;
  }
  return {};
}

void RdmaTransport::postOrBacklog(PendingSend send) {
  {
    std::lock_guard lock(mu_);
    // A call completed on the I/O thread may start another before that
    // thread has given the freed credit to the backlog: without the second
    // test it would take the credit, and a queue deeper than the credits
    // could keep the oldest calls waiting until they time out.
    if (outstanding_ >= credits_ || !backlog_.empty()) {
      ++stats_.backlogged;
      backlog_.push_back(send);
      return;
    }
    ++outstanding_;
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

void RdmaTransport::run() {
  ioThreadId_.store(std::this_thread::get_id());
  auto nextTick = std::chrono::steady_clock::now() + std::chrono::milliseconds(kTickIntervalMs);
  while (!stopping_.load()) {
    std::array<pollfd, 3> fds{{{completionChannel_.get()->fd, POLLIN, 0},
                               {events_.get()->fd, POLLIN, 0},
                               {wakeFd_.get(), POLLIN, 0}}};
    const auto waitMs = std::chrono::duration_cast<std::chrono::milliseconds>(
                            nextTick - std::chrono::steady_clock::now())
                            .count();
    const int rc = ::poll(fds.data(), fds.size(), waitMs < 0 ? 0 : static_cast<int>(waitMs) + 1);
    if (rc < 0 && errno != EINTR) fail(errnoError(errno, "poll on " + description_));
    if (rc > 0) {
      if (fds[2].revents & POLLIN) {
        std::uint64_t v;
        (void)!::read(wakeFd_.get(), &v, sizeof v);
      }
      if (stopping_.load()) break;
      if (fds[0].revents & POLLIN) {
        (void)cq_.waitEvent(std::chrono::milliseconds(0));  // ack and re-arm
        pollCompletions();
      }
      if (fds[1].revents & POLLIN) {
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
    }
    if (std::chrono::steady_clock::now() >= nextTick) {
      sink_->onTick();
      nextTick = std::chrono::steady_clock::now() + std::chrono::milliseconds(kTickIntervalMs);
    }
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
        if (!stopping_.load()) fail(makeError(ec, description_ + (ctx->receive ? " receive" : " send")));
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
  const auto* base = reinterpret_cast<const std::uint8_t*>(receiveBuffers_.data()) + slot * options_.inlineSize;
  std::span<const std::uint8_t> bytes(base, std::min<std::size_t>(length, options_.inlineSize));
  RpcRdmaHeader h;
  std::size_t consumed = 0;
  Error e = decodeHeader(bytes, h, consumed);
  if (e) {
    // Which connection and, once the header got that far, which call: an
    // ERR_CHUNK or a bad header is otherwise hard to tie to a request.
    e.context = description_ + (bytes.size() >= 4 ? ": reply header for xid " + std::to_string(h.xid) : "") +
                ": " + e.context;
  }
  // Held until the end: a reply in its Reply chunk lives in its memory.
  const std::unique_ptr<CallState> call = takeAnsweredCall(h);
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
    if (h.proc == RdmaProc::kMsg && rpc::peekXid(inner, rpcXid) && rpcXid == h.xid) {
      sink_->onMessage(inner, {});
    }
  } else {
    deliverReply(h, *call, bytes.subspan(consumed));
  }
  postReceive(slot);
  startBacklogged();
}

std::unique_ptr<RdmaTransport::CallState> RdmaTransport::takeAnsweredCall(const RpcRdmaHeader& h) {
  std::unique_ptr<CallState> call;
  std::lock_guard lock(mu_);
  credits_ = std::clamp<std::uint32_t>(h.credits, 1, options_.credits);
  stats_.creditsGranted = credits_;
  auto it = calls_.find(h.xid);
  if (it != calls_.end()) {
    call = std::move(it->second);
    calls_.erase(it);
  }
  // A reply for a call we never sent, or a second one for a call, frees
  // no credit: counting it would let us exceed the server's grant.
  if ((call || abandonedSent_.erase(h.xid) > 0) && outstanding_ > 0) --outstanding_;
  return call;
}

// A well-formed reply to a call in flight: its RPC message (inline, or in
// the Reply chunk) goes up with the lengths placed in its Write chunks, or
// the call fails if the server broke the chunks' contract.
void RdmaTransport::deliverReply(const RpcRdmaHeader& h, const CallState& call,
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
  if (!rpc::peekXid(message, rpcXid) || rpcXid != h.xid) {
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
  for (int i = 0; i < 1024; ++i) {
    PendingSend next;
    {
      std::lock_guard lock(mu_);
      if (backlog_.empty() || outstanding_ >= credits_) break;
      next = backlog_.front();
      backlog_.pop_front();
      if (calls_.find(next.xid) == calls_.end()) {  // abandoned while it waited
        freeSendSlots_.push_back(next.slot);
        continue;
      }
      ++outstanding_;
    }
    post(next);
  }
}

std::uint32_t RdmaTransport::callLimit() const {
  std::lock_guard lock(mu_);
  return credits_;
}

std::string RdmaTransport::statsLine() const {
  const RdmaStats s = stats();
  std::string line = "xprt: rdma " + options_.host + ":" + std::to_string(options_.port) +
                     " calls=" + std::to_string(s.calls) + " inline=" + std::to_string(s.inlineCalls) +
                     " read_chunk_calls=" + std::to_string(s.readChunkCalls) +
                     " nomsg_calls=" + std::to_string(s.positionZeroCalls) +
                     " write_chunks=" + std::to_string(s.writeChunks) + " reply_chunks=" + std::to_string(s.replyChunks) +
                     " rdma_read_bytes=" + std::to_string(s.bytesPulledByServer) +
                     " rdma_write_bytes=" + std::to_string(s.bytesPushedByServer) +
                     " credits=" + std::to_string(s.creditsGranted) + " backlogged=" + std::to_string(s.backlogged) +
                     " registrations=" + std::to_string(s.registrations) +
                     " peer_inline=" + std::to_string(s.peerReceiveSize) +
                     " memreg=" + (options_.registration == MemoryRegistration::kPooled ? "pooled" : "per-io");
  for (const auto& [status, n] : s.completionErrors) line += " completion_error[" + status + "]=" + std::to_string(n);
  return line;
}

RdmaStats RdmaTransport::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace nfsrdma::transport::rdma
