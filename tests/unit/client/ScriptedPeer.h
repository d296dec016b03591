// An in-process RPC peer for the transport, RPC and session tests.
//
// The client under test gets one end of a socketpair (or of a 127.0.0.1 TCP
// connection); the other end stays here and speaks raw record-marked bytes,
// so a test decides exactly how replies arrive: split into fragments, a byte
// at a time, many per write, out of order, damaged, or never. The peer is
// driven either directly from the test thread (the RPC client never blocks,
// so a test can call, read the calls here and answer) or by a serving thread
// with a handler (the NFSv4.1 session setup blocks, so something must answer
// while it runs). Every wait is bounded: a broken client fails a test, it
// never hangs it.
//
// The reply builders use our own XdrEncoder; nothing here comes from the code
// paths under test except that codec.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "client/rpc/RpcMessage.h"
#include "client/transport/TcpTransport.h"
#include "client/xdr/XdrEncoder.h"

namespace nfsrdma::testpeer {

using Bytes = std::vector<std::uint8_t>;

// How long the peer waits for the client before giving up (and failing the test).
inline constexpr std::chrono::milliseconds kPeerWait{3000};

// ------------------------------------------------------------ message builders

// Builds an XDR message in growable storage with our XdrEncoder.
class XdrBuilder {
 public:
  explicit XdrBuilder(std::size_t capacity = 64 * 1024) : storage_(capacity), enc_(storage_) {}
  xdr::XdrEncoder& enc() { return enc_; }
  // The bytes written so far; throws if the capacity was exceeded.
  Bytes bytes() const;

 private:
  Bytes storage_;
  xdr::XdrEncoder enc_;
};

// A call as the peer decoded it.
struct RpcCall {
  std::uint32_t xid = 0;
  std::uint32_t program = 0;
  std::uint32_t version = 0;
  std::uint32_t procedure = 0;
  std::uint32_t credentialFlavor = 0;
  Bytes args;  // everything after the verifier
};

// Decodes an RPC call message; nullopt unless it is a well-formed CALL.
std::optional<RpcCall> parseCall(std::span<const std::uint8_t> message);

// MSG_ACCEPTED / SUCCESS with an AUTH_NONE verifier, then the results.
Bytes successReply(std::uint32_t xid, std::span<const std::uint8_t> results = {});
// MSG_ACCEPTED with another accept_stat; PROG_MISMATCH carries low/high.
Bytes acceptErrorReply(std::uint32_t xid, rpc::AcceptStat stat, std::uint32_t low = 0,
                       std::uint32_t high = 0);
// MSG_DENIED / AUTH_ERROR with the given auth_stat.
Bytes authErrorReply(std::uint32_t xid, std::uint32_t authStat);
// MSG_DENIED / RPC_MISMATCH.
Bytes rpcMismatchReply(std::uint32_t xid, std::uint32_t low, std::uint32_t high);
// A 4-byte XDR word (for hand-made damaged messages).
Bytes word(std::uint32_t v);
// a followed by b.
Bytes concat(std::initializer_list<std::span<const std::uint8_t>> parts);
// A deterministic byte pattern (tells a reassembled record from a shuffled one).
Bytes pattern(std::size_t size, std::uint32_t seed);

// Record marking (RFC 5531 section 11): a fragment header.
Bytes recordMarker(std::uint32_t length, bool last);
// The message as a single last fragment.
Bytes frame(std::span<const std::uint8_t> message);
// The message split into fragments of the given sizes; the sizes must sum to
// the message size (zero-length fragments are allowed); the final one is last.
Bytes frameFragments(std::span<const std::uint8_t> message, std::span<const std::size_t> sizes);

// ------------------------------------------------------------ the peer

class ScriptedPeer;

// A peer with the client's transport connected to it.
struct Connection {
  std::unique_ptr<ScriptedPeer> peer;
  std::unique_ptr<transport::TcpTransport> transport;
};

// A socketpair: the transport adopts one end.
Connection connectSocketPair();
// A loopback TCP connection: the transport connects to a listener on
// 127.0.0.1 port 0 (real TCP: SO_RCVLOWAT and segmenting behave as in use).
Connection connectTcpLoopback();

// A listener on 127.0.0.1 (the kernel picks the port), for a client that
// makes its own connection (nfsrdma::Client connects by host and port).
class LoopbackListener {
 public:
  LoopbackListener();
  ~LoopbackListener();
  LoopbackListener(const LoopbackListener&) = delete;
  LoopbackListener& operator=(const LoopbackListener&) = delete;

  std::uint16_t port() const { return port_; }
  // The peer of the next connection, or nullptr when none came within timeout.
  std::unique_ptr<ScriptedPeer> accept(std::chrono::milliseconds timeout = kPeerWait);

 private:
  int fd_;
  std::uint16_t port_ = 0;
};

class ScriptedPeer {
 public:
  using CallHandler = std::function<void(ScriptedPeer& peer, const RpcCall& call)>;
  using IdleHandler = std::function<void(ScriptedPeer& peer)>;

  ScriptedPeer(int fd, bool isSocketPair);
  ~ScriptedPeer();  // stops serving and closes the connection
  ScriptedPeer(const ScriptedPeer&) = delete;
  ScriptedPeer& operator=(const ScriptedPeer&) = delete;

  // Reads one whole record (every fragment) within timeout; nullopt on
  // timeout or end of stream. Not while serve() runs.
  std::optional<Bytes> readRecord(std::chrono::milliseconds timeout = kPeerWait);
  // readRecord() parsed as a call; nullopt also when it does not parse.
  std::optional<RpcCall> readCall(std::chrono::milliseconds timeout = kPeerWait);

  // Writes all bytes within timeout; false if the client did not take them.
  // Thread-safe (a serving thread and the test may both write).
  bool send(std::span<const std::uint8_t> bytes, std::chrono::milliseconds timeout = kPeerWait);
  // send(frame(message)).
  bool sendRecord(std::span<const std::uint8_t> message) { return send(frame(message)); }
  // Socketpair only: writes chunk bytes at a time and waits after each until
  // the client has read them, so every recv() of the client sees one chunk.
  bool trickle(std::span<const std::uint8_t> bytes, std::size_t chunk);
  // Socketpair only: waits until the client has read everything written.
  bool waitConsumed(std::chrono::milliseconds timeout = kPeerWait);

  // Closes the connection as a server would (the client reads end-of-stream).
  void hangUp();

  // Starts a thread that reads calls and hands each to onCall; onIdle runs
  // whenever no call arrived for idleInterval. Stops at end of stream or in
  // the destructor. Records that are not RPC calls are counted and skipped.
  void serve(CallHandler onCall, IdleHandler onIdle = {},
             std::chrono::milliseconds idleInterval = std::chrono::milliseconds(5));
  // Stops the serving thread (idempotent); the connection stays open.
  void stopServing();

  std::size_t callsServed() const { return callsServed_.load(); }
  std::size_t unparsableRecords() const { return unparsable_.load(); }

 private:
  // Reads bytes into in_ until a whole record is buffered; 1 = record, 0 = timeout, -1 = EOF/error.
  int fillRecord(std::chrono::steady_clock::time_point deadline, Bytes& record);
  void serveLoop(CallHandler onCall, IdleHandler onIdle, std::chrono::milliseconds idleInterval);

  int fd_;
  int stopFd_;  // eventfd: wakes the serving thread
  const bool isSocketPair_;
  std::mutex sendMutex_;
  Bytes in_;  // received, not yet consumed (reader thread only)
  std::thread server_;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> callsServed_{0};
  std::atomic<std::size_t> unparsable_{0};
};

}  // namespace nfsrdma::testpeer
