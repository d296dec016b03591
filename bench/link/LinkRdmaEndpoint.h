// One QP of the link benchmark's RDMA sessions (LinkRdmaClient.cpp,
// LinkRdmaServer.cpp) and what rides on it: the endpoint (PD, CQs, data
// buffer, receive ring, QP), the buffer shape both sides agree on, and the
// control messages between them. Internal to bench/link.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench/link/LinkOptions.h"
#include "bench/link/LinkProtocol.h"
#include "verbs/CmConnection.h"
#include "verbs/CompletionQueue.h"
#include "verbs/MemoryRegion.h"
#include "verbs/ProtectionDomain.h"
#include "verbs/QueuePair.h"
#include "verbs/VerbsError.h"

namespace nfsrdma::bench::linkrdma {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

inline constexpr std::uint32_t kMaxInline = 64;

struct RecvSlot {
  std::uint32_t index;
};

// Shape of an endpoint's buffers, the same on both sides.
struct EndpointShape {
  std::size_t maxSize;      // largest message: data = source half + target half
  std::uint32_t slotBytes;  // receive slot size
  std::uint32_t slots;      // receive slots posted
  std::uint32_t sendDepth;  // send queue entries for data
  std::uint32_t maxInline;  // QP's inline capacity: only the latency test sends inline
};

// Members in creation order, so destruction runs QP -> buffers -> CQs ->
// channel -> PD -> id, the reverse of setup.
class Endpoint {
 public:
  Endpoint(verbs::CmId cmId, const EndpointShape& s)
      : id(std::move(cmId)),
        pd(verbs::ProtectionDomain::allocate(id.verbs())),
        channel(verbs::CompletionChannel::create(id.verbs())),
        sendChannel(verbs::CompletionChannel::create(id.verbs())),
        sendCq(verbs::CompletionQueue::create(id.verbs(), static_cast<int>(s.sendDepth + 8),
                                              &sendChannel)),
        recvCq(verbs::CompletionQueue::create(id.verbs(), static_cast<int>(s.slots + 8), &channel)),
        data(verbs::RegisteredBuffer::allocate(pd.get(), 2 * s.maxSize)),
        ring(verbs::RegisteredBuffer::allocate(pd.get(), std::size_t{s.slotBytes} * (s.slots + 1),
                                               IBV_ACCESS_LOCAL_WRITE)),
        shape(s),
        slotTags(s.slots),
        qp(makeQp(s)) {
    for (std::uint32_t i = 0; i < s.slots; ++i) {
      slotTags[i].index = i;
      postRecvSlot(i);
    }
    if (auto ec = recvCq.requestNotify()) verbs::throwVerbError("ibv_req_notify_cq", ec.value());
  }
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  ~Endpoint() {
    (void)id.disconnect();
    (void)qp.drain(recvCq, sendCq, 2s);
  }

  std::byte* source() const { return data.data(); }
  std::byte* target() const { return data.data() + shape.maxSize; }
  std::uint64_t remoteSource() const { return remoteAddress; }
  std::uint64_t remoteTarget() const { return remoteAddress + shape.maxSize; }
  std::byte* slot(std::uint32_t i) const { return ring.data() + std::size_t{i} * shape.slotBytes; }

  void postRecvSlot(std::uint32_t i) {
    ibv_sge sge = ring.sge(std::size_t{i} * shape.slotBytes, shape.slotBytes);
    ibv_recv_wr wr{};
    wr.wr_id = verbs::toWrId(&slotTags[i]);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    if (auto ec = qp.postRecv(wr)) verbs::throwVerbError("ibv_post_recv", ec.value());
  }

  verbs::CmId id;
  verbs::ProtectionDomain pd;
  verbs::CompletionChannel channel;      // the receive CQ's: control messages
  verbs::CompletionChannel sendChannel;  // the send CQ's: the loop may sleep on it
  verbs::CompletionQueue sendCq;
  verbs::CompletionQueue recvCq;
  verbs::RegisteredBuffer data;
  verbs::RegisteredBuffer ring;
  EndpointShape shape;
  std::vector<RecvSlot> slotTags;
  verbs::QueuePair qp;
  std::uint64_t remoteAddress = 0;
  std::uint32_t remoteRkey = 0;

 private:
  verbs::QueuePair makeQp(const EndpointShape& s) {
    ibv_qp_init_attr attr{};
    attr.send_cq = sendCq.get();
    attr.recv_cq = recvCq.get();
    attr.qp_type = IBV_QPT_RC;
    attr.sq_sig_all = 0;
    attr.cap.max_send_wr = s.sendDepth + 2;  // + control send + drain marker
    attr.cap.max_recv_wr = s.slots + 1;      // + drain marker
    attr.cap.max_send_sge = 1;
    attr.cap.max_recv_sge = 1;
    // As perftest's bandwidth tests (inline 0): a soft-RoCE WQE grows with it.
    attr.cap.max_inline_data = s.maxInline;
    return verbs::QueuePair::createOnCmId(id.get(), pd.get(), attr);
  }
};

// A session's endpoints, QP 0 first (it carries the control messages).
using Endpoints = std::vector<std::unique_ptr<Endpoint>>;

// Throws std::runtime_error naming what completed and the completion's
// status and QP.
[[noreturn]] void completionFailed(const char* what, const ibv_wc& wc);

// Sends a control message on ep and waits for its completion.
void sendControl(Endpoint& ep, const ControlMessage& m);

// Waits (sleeping on the completion channel, so an idle side leaves the CPU
// to the other side and to soft-RoCE) for the next control message.
ControlMessage waitControl(Endpoint& ep, std::chrono::milliseconds timeout, const char* waitingFor);

// waitControl's message, which must be of kind (named name in the
// errors); another kind throws LinkProtocolError.
ControlMessage expectControl(Endpoint& ep, ControlKind kind, std::chrono::milliseconds timeout,
                             const char* name);

// The buffers a test needs for messages of up to maxSize bytes: the
// latency test receives its data in the ring, the bandwidth tests in the
// data buffer.
EndpointShape shapeFor(LinkTest test, std::uint64_t maxSize, std::uint32_t txDepth);

// The connection's active MTU for the banner ("4096[B]", "?" unknown).
std::string mtuText(const verbs::CmId& id);

// A session's verify seed.
std::uint32_t newSeed();

}  // namespace nfsrdma::bench::linkrdma
