// RPC-over-RDMA version 1 (RFC 8166) with the NFS binding of RFC 8267:
// the RDMA transport behind the same Transport interface as TCP, so the
// NFSv4.1 layer runs unchanged over it (like the kernel's xprtrdma).
//
// Calls go out as one SEND each from a pre-registered send buffer, inline
// when they fit the server's receive size (RFC 8797 private data; 1024 bytes
// without it). WRITE payloads are exposed to the server as Read chunks at
// their XDR position, straight from the caller's memory; READ data lands in
// the caller's buffer through a Write chunk; large replies come through a
// Reply chunk (ChunkPlanner decides). Calls in flight never exceed the
// server's credit grant: the rest wait in a backlog (CreditWindow). An I/O
// loop (IoLoop) waits on the completion channel and the connection
// manager's events: its own, or one shared by the queue pairs of a trunk, so
// that with more connections than cores one thread takes every QP's
// completions in one wakeup instead of a thread per QP contending with the
// device's own work for the same cores.
//
// The decisions are pure units beside this file, tested without verbs:
// ChunkPlanner (which chunks), ChunkLists (their segments and memory),
// InlineMarshal (the inline bytes), CreditWindow (who may go),
// MemoryRegistration (pooled or per-I/O registration). This class does the
// verbs I/O they call for.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "client/transport/IoLoop.h"
#include "client/transport/Transport.h"
#include "client/transport/rdma/ChunkLists.h"
#include "client/transport/rdma/ChunkPlanner.h"
#include "client/transport/rdma/CreditWindow.h"
#include "client/transport/rdma/MemoryRegistration.h"
#include "client/transport/rdma/RpcRdmaHeader.h"
#include "verbs/CmConnection.h"
#include "verbs/CmEventChannel.h"
#include "verbs/CmId.h"
#include "verbs/CompletionQueue.h"
#include "verbs/MemoryRegion.h"
#include "verbs/ProtectionDomain.h"
#include "verbs/QueuePair.h"

namespace nfsrdma::transport::rdma {

struct RdmaTransportOptions {
  std::string host;
  std::uint16_t port = 20049;
  std::string bindAddress;  // local address; empty: routing chooses
  std::chrono::milliseconds timeout{5000};
  std::uint32_t credits = 64;       // credits asked for; one receive buffer more is posted
  std::uint32_t inlineSize = 4096;  // our receive (and send) buffer size
  // Registered send buffers. A call waiting for credits keeps its buffer, so
  // this must exceed the calls the session can have outstanding (its slots).
  std::uint32_t sendBuffers = 256;
  MemoryRegistration registration = MemoryRegistration::kPooled;
  bool numaAuto = false;  // numa=auto: the I/O loop's thread runs on the device's node
};

// Counters in the spirit of the kernel's "xprt: rdma" line in mountstats.
struct RdmaStats {
  std::uint64_t calls = 0;
  std::uint64_t inlineCalls = 0;
  std::uint64_t readChunkCalls = 0;     // WRITE data in Read chunks
  std::uint64_t positionZeroCalls = 0;  // RDMA_NOMSG
  std::uint64_t writeChunks = 0;        // READ data placed directly
  std::uint64_t replyChunks = 0;
  std::uint64_t bytesPulledByServer = 0;  // RDMA READ from our memory
  std::uint64_t bytesPushedByServer = 0;  // RDMA WRITE into our memory
  std::uint64_t registrations = 0;
  std::uint64_t backlogged = 0;  // calls that waited for credits
  std::uint32_t creditsGranted = 0;
  std::uint32_t peerReceiveSize = 0;  // from RFC 8797 private data (1024 if absent)
  std::map<std::string, std::uint64_t> completionErrors;  // by status text
};

class RdmaTransport final : public Transport {
 public:
  // Connects through rdma_cm; throws NfsException (kNoRdmaDevice when the
  // host has no RDMA device, otherwise naming the failing step).
  // loop: the I/O thread to run on, shared with other connections; null: its own.
  static std::unique_ptr<RdmaTransport> connect(const RdmaTransportOptions& options,
                                                std::shared_ptr<IoLoop> loop = nullptr);
  ~RdmaTransport() override;

  RdmaTransport(const RdmaTransport&) = delete;
  RdmaTransport& operator=(const RdmaTransport&) = delete;

  void start(TransportSink& sink) override;
  Error send(const OutgoingMessage& message) override;
  void setMaxIncomingMessage(std::size_t bytes) override { maxIncoming_.store(bytes); }
  void close() override;
  void abandon(std::uint32_t xid) override;
  bool onIoThread() const override { return loop_->onThread(); }
  std::string describe() const override { return description_; }
  RdmaStats stats() const;
  std::string statsLine() const override;
  std::uint32_t callLimit() const override;

 private:
  // What the loop waits on for this connection: one member for the
  // completion channel, one for the connection manager's events.
  class LoopMember;

  RdmaTransport(const RdmaTransportOptions& options, std::shared_ptr<IoLoop> loop);
  void setUp(const RdmaTransportOptions& options);  // receives, send slots, connect
  void onCompletionEvent();
  void onCmEvent();
  void pollCompletions();
  // send()'s steps.
  Error encodeChunkLists(const OutgoingMessage& message, const CallPlan& p, CallChunks& call,
                         RpcRdmaHeader& h, std::uint64_t& pulled);
  Error takeSendSlot(std::size_t& slot);
  Error encodeCall(const OutgoingMessage& message, const CallPlan& p, const RpcRdmaHeader& h,
                   std::size_t slot, std::size_t& length);
  void countCall(const CallPlan& p, const RpcRdmaHeader& h, std::uint64_t pulled);
  void onReceive(std::size_t slot, std::uint32_t length);
  // onReceive()'s steps.
  std::unique_ptr<CallChunks> takeAnsweredCall(const RpcRdmaHeader& h);
  void deliverReply(const RpcRdmaHeader& h, const CallChunks& call,
                    std::span<const std::uint8_t> inner);
  void startBacklogged();
  void postReceive(std::size_t slot);
  // A new call: sent now if a credit is free and no earlier call waits for
  // one (first come, first served), else queued in the backlog.
  void postOrBacklog(PendingSend send);
  // Posts a call whose credit is already counted.
  void post(const PendingSend& send);
  void fail(const Error& e);
  // The device side of registration, which the registration strategy calls.
  Registration registerRange(std::uintptr_t start, std::size_t length, unsigned access);

  RdmaTransportOptions options_;
  std::string description_;
  // Declared in creation order: destruction unwinds like rdma_server.c's
  // ladder (QP before CQ before channel before PD before the id).
  verbs::CmEventChannel events_;
  verbs::CmId id_;
  verbs::ProtectionDomain pd_;
  verbs::CompletionChannel completionChannel_;
  verbs::CompletionQueue cq_;
  verbs::QueuePair qp_;
  verbs::RegisteredBuffer receiveBuffers_;
  verbs::RegisteredBuffer sendBuffers_;

  InlineLimits limits_;
  std::shared_ptr<IoLoop> loop_;
  std::unique_ptr<LoopMember> completionMember_;
  std::unique_ptr<LoopMember> cmEventMember_;
  TransportSink* sink_ = nullptr;
  bool started_ = false;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> broken_{false};
  std::string failure_;  // the first fail()'s message, for later send errors (mu_)
  std::atomic<std::size_t> maxIncoming_{1U << 20};

  mutable std::mutex mu_;
  std::vector<std::size_t> freeSendSlots_;
  std::unordered_map<std::uint32_t, std::unique_ptr<CallChunks>> calls_;
  CreditWindow window_;
  RdmaStats stats_;
  // After the protection domain: pooled registrations go before it does.
  std::unique_ptr<RegistrationStrategy> registrations_;
  struct WorkContext {
    bool receive;
    std::size_t slot;
  };
  std::vector<WorkContext> receiveContexts_;
  std::vector<WorkContext> sendContexts_;
};

}  // namespace nfsrdma::transport::rdma
