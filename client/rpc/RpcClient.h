// ONC RPC client over any Transport: XIDs, the table of calls in flight,
// reply matching and call timeouts.
//
// A failed connection ends every call in flight with kConnectionLost (the
// server may or may not have run them) and later calls fail with it at once,
// until reconnect() puts a new connection from the factory in its place. The
// RPC layer resends nothing itself: only the session knows which calls may
// go again and on which slot (nfs4/Session.h).
//
// Many calls are in flight on one connection; a reply is matched to its call
// by XID, in any order. Replies to unknown XIDs (late replies to calls that
// already timed out, or garbage) are counted and dropped. Callbacks run on
// the transport's I/O thread and may start new calls (that is how a queue
// depth is kept without waking another thread).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "client/base/Error.h"
#include "client/base/RpcStats.h"
#include "client/rpc/RpcMessage.h"
#include "client/transport/Transport.h"
#include "client/xdr/XdrDecoder.h"
#include "client/xdr/XdrEncoder.h"

namespace nfsrdma::rpc {

// Called exactly once per accepted call. On success error is empty and
// results is positioned at the procedure's results (valid during the call).
using ReplyCallback = std::function<void(const Error& error, xdr::XdrDecoder& results)>;
// Writes the procedure's arguments after the header.
using ArgsEncoder = std::function<void(xdr::XdrEncoder& enc)>;

// What a transport with direct data placement (RDMA) needs beyond the bytes.
// Held by value (queued calls keep it), so no allocation per call.
struct CallHints {
  static constexpr std::size_t kMaxDirect = 4;
  std::array<std::span<std::uint8_t>, kMaxDirect>
      directReplies{};  // READ destinations, in op order
  std::size_t directCount = 0;
  std::size_t maxReplySize = 0;  // direct payloads excluded
};

class RpcClient final : public transport::TransportSink {
 public:
  // Makes a new connection to the same server; throws NfsException.
  using TransportFactory = std::function<std::unique_ptr<transport::Transport>()>;

  RpcClient(std::unique_ptr<transport::Transport> transport, std::uint32_t program,
            std::uint32_t version, Credential credential, std::chrono::milliseconds timeout);
  ~RpcClient() override;  // closes the transport; calls still in flight fail with kShutdown

  RpcClient(const RpcClient&) = delete;
  RpcClient& operator=(const RpcClient&) = delete;

  // Starts a call. If it returns an error the callback is never called;
  // otherwise the callback is called exactly once (reply, timeout, transport
  // failure or shutdown). Encoded headers larger than the scratch buffer
  // fail with kEncodeOverflow.
  Error call(std::uint32_t procedure, const ArgsEncoder& encodeArgs, ReplyCallback callback,
             const CallHints& hints = {});

  // Stops further calls and fails those in flight with kShutdown; closes the transport.
  void shutdown();

  // Lets reconnect() replace a failed connection; without a factory a lost
  // connection stays lost.
  void setReconnect(TransportFactory factory);
  bool canReconnect() const;
  // Whether the connection failed and no new one replaced it yet.
  bool connectionLost() const;
  // Takes a connection that still looks up for dead: a call went unanswered
  // past the timeout (packets dropped with the link up: a black-holed route,
  // a switch rebooting). Every call in flight ends with kConnectionLost
  // whose context is why, later calls fail at once, and reconnect() replaces it, as a
  // failure the transport saw itself would. Nothing happens when the
  // connection already failed, or when it cannot be replaced (no factory):
  // then its calls time out one by one.
  void presumeDead(const std::string& why);
  // Closes the failed connection and starts a new one from the factory (its
  // error returned, naming the server). Not from the I/O thread; after
  // shutdown() it fails with kShutdown.
  Error reconnect();

  void setMaxIncomingMessage(std::size_t bytes);
  bool onIoThread() const;
  // The connection whose reply callback this thread is in, if any: a call
  // sent on it from there leaves corked with the others of the wakeup.
  static const RpcClient* deliveringNow() { return tlsDelivering_; }
  // This I/O thread's loop round (transport::IoLoop::currentRound).
  static std::uint64_t deliveryRound();
  bool corksRounds() const;  // the transport's (Transport::corksRounds)
  std::string describe() const;
  std::string transportStats() const;
  std::uint32_t transportCallLimit() const;
  std::chrono::milliseconds timeout() const { return timeout_; }
  RpcStats stats() const;
  // Calls sent and not yet answered, without a lock: what a trunked session
  // compares to send on the least loaded connection.
  std::size_t inFlight() const { return inFlight_.load(std::memory_order_relaxed); }

  // Largest encoded call head (headers and small arguments; bulk excluded).
  static constexpr std::size_t kMaxCallHead = 64 * 1024;

 private:
  struct Pending {
    ReplyCallback callback;
    std::chrono::steady_clock::time_point deadline;
  };

  void onMessage(std::span<const std::uint8_t> message) override { onMessage(message, {}); }
  void onMessage(std::span<const std::uint8_t> message,
                 std::span<const std::uint32_t> placed) override;
  void onTransportError(const Error& error) override;
  void onCallError(std::uint32_t xid, const Error& error) override;
  void onTick() override;
  std::size_t callsInFlight() const override { return inFlight_.load(std::memory_order_relaxed); }
  void failAll(const Error& error);
  // Moves the call for xid out of pending_ (mu_ held); false, counted as an unknown XID, if none.
  bool takePendingLocked(std::uint32_t xid, Pending& call);

  // The connection: replaced by reconnect() under the exclusive lock, used
  // under the shared one (send never blocks on the network, so neither does
  // a reconnect waiting for it).
  mutable std::shared_mutex transportMu_;
  std::unique_ptr<transport::Transport> transport_;
  TransportFactory factory_;
  std::size_t maxIncoming_ = 0;  // as last set, for the next connection (transportMu_)
  const std::uint32_t program_;
  const std::uint32_t version_;
  const Credential credential_;
  const std::chrono::milliseconds timeout_;
  std::atomic<std::uint32_t> nextXid_;

  mutable std::mutex mu_;
  std::unordered_map<std::uint32_t, Pending> pending_;
  Error broken_;  // set once the transport failed or shutdown began
  bool shutDown_ = false;
  bool currentFailed_ = false;  // the transport in place reported a failure
  RpcStats stats_;
  std::atomic<std::size_t> inFlight_{0};  // pending_.size(), readable without the lock
  static inline thread_local const RpcClient* tlsDelivering_ = nullptr;
};

}  // namespace nfsrdma::rpc
