// An NFSv4.1 client session (RFC 8881 sections 2.10, 18.35, 18.36, 18.46).
//
// Establishes the client id and session (EXCHANGE_ID, CREATE_SESSION,
// RECLAIM_COMPLETE), then runs every COMPOUND through a slot with SEQUENCE
// first. submit() never blocks: with every slot busy the request waits in a
// FIFO and leaves when a reply frees a slot, so callers can push any number
// of requests and exactly 'slots' are in flight. While idle, a renewal thread
// sends a bare SEQUENCE each lease/3 so the server keeps our state.
//
// Riding through (the renewal thread does it, while requests wait):
// - A lost connection (kConnectionLost from the RPC layer): reconnect with
//   bounded exponential backoff, bind the new connection to the session
//   (BIND_CONN_TO_SESSION: knfsd answers a replayed SEQUENCE before it binds
//   the connection it came on), then resend every call that was in flight
//   on its own slot with its own sequence id. The server's reply cache
//   answers those it already ran (state-changing COMPOUNDs carry
//   sa_cachethis), so a WRITE, CREATE, REMOVE or RENAME is never applied
//   twice (RFC 8881 2.10.6.1). Calls that never reached the wire go as usual.
// - A session the server no longer knows (NFS4ERR_BADSESSION/DEADSESSION,
//   or EXPIRED/STALE_CLIENTID for its client ID, at SEQUENCE or at the bind:
//   the server restarted, or our lease ran out while the process was
//   stopped): CREATE_SESSION, after a new EXCHANGE_ID under the same owner
//   when the client ID is gone too (RFC 8881 2.10.13.1). Under a new client
//   ID the owner's open state is reclaimed (SessionOptions::reclaim) before
//   RECLAIM_COMPLETE. Then the requests go again, re-encoded (so they carry
//   the reclaimed stateids), on the new session's slots.
// Both end within recoveryTimeout of the loss; then each waiting request
// fails with kServerUnreachable naming the server and how long it tried.
//
// Trunking (RFC 8881 2.10.5, nconnect): a session may run over several
// connections. The first one sets it up (EXCHANGE_ID, CREATE_SESSION, and
// the back channel ganesha keeps there); every other one joins it with
// BIND_CONN_TO_SESSION before it carries a call (ganesha 4.x and knfsd also
// bind on a SEQUENCE under SP4_NONE, but knfsd does not bind on a replayed
// one). A connection to another server address joins only after EXCHANGE_ID
// there shows the same server owner (major and minor id) and scope. The
// slot table stays one per session; each call goes on the least loaded
// connection that is up, and each connection keeps its own RPC table, I/O
// thread and (RDMA) credits. A trunked session reconnects one connection at
// a time: when one fails while others are up, its calls go again on their
// slots over the others, and the renewal thread reconnects and binds it in
// the background. Only when none is left does the recovery above run.
//
// Session.cpp holds the normal path, SessionRecovery.cpp the riding
// through, SessionTrunk.cpp what only a trunk needs.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/base/Error.h"
#include "client/nfs4/Compound.h"
#include "client/nfs4/SessionStats.h"
#include "client/nfs4/SlotTable.h"
#include "client/rpc/RpcClient.h"

namespace nfsrdma::nfs4 {

// What a reclaim hook sends on the session being set up: encode writes the
// ops after SEQUENCE; decode reads their results.
using NewSessionCall = std::function<Error(const std::function<void(CompoundEncoder&)>& encode,
                                           const std::function<Error(CompoundDecoder&)>& decode)>;
// kReclaim: before RECLAIM_COMPLETE, in the server's grace period (OPEN with
// CLAIM_PREVIOUS); kReopen: after it, what could not be reclaimed (ordinary opens).
enum class ReclaimPhase { kReclaim, kReopen };

struct SessionOptions {
  std::uint32_t slots = 32;  // fore-channel slots asked for (queue depth)
  std::uint32_t maxRequestSize = (1U << 20) + 8192;
  std::uint32_t maxResponseSize = (1U << 20) + 8192;
  std::uint32_t maxOperations = 16;
  std::string ownerId;  // unique per client instance
  // After a lost session was replaced: what happened (on the renewal thread).
  std::function<void(const std::string&)> onReplaced;
  // How long close() sends DESTROY_SESSION and DESTROY_CLIENTID again while
  // the server answers that it is still busy with them (see close()).
  std::chrono::milliseconds teardownBudget{10000};
  // How long requests wait, from the loss, for the connection and session
  // to come back (the kernel's timeo x retrans, in one number).
  std::chrono::milliseconds recoveryTimeout{120000};
  // Where the reconnect backoff's doubling (from 0.1 s) stops.
  std::chrono::milliseconds maxReconnectPause{2000};
  // After a recovery: what happened, when and for how long (renewal thread).
  std::function<void(const std::string&)> onRecovered;
  // Re-establishes the owner's state on a new client ID (see ReclaimPhase);
  // returns what it did, for onRecovered's notice.
  std::function<std::string(ReclaimPhase, const NewSessionCall&)> reclaim;
};

// One connection a session runs over (the RPC client stays its owner's).
struct SessionConnection {
  rpc::RpcClient* rpc = nullptr;
  // It goes to another server address than the first connection: it joins
  // only once EXCHANGE_ID there shows the same server.
  bool otherAddress = false;
};

class Session {
 public:
  // Writes the operations that follow SEQUENCE.
  using Encode = std::function<void(CompoundEncoder& ops)>;
  // Called exactly once. On success, error is empty and the decoder stands
  // after the SEQUENCE result; otherwise results is null.
  using Decode = std::function<void(const Error& error, CompoundDecoder* results)>;

  // Runs EXCHANGE_ID, CREATE_SESSION and RECLAIM_COMPLETE; throws NfsException.
  Session(rpc::RpcClient& rpc, const SessionOptions& options);
  // The same over every connection given (the first sets the session up,
  // the others are bound to it); throws NfsException naming a connection
  // that could not join.
  Session(const std::vector<SessionConnection>& connections, const SessionOptions& options);
  ~Session();  // stops renewal and destroys the session if close() was not called

  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Queues a COMPOUND. The callback always fires exactly once, possibly
  // before submit() returns (e.g. when the session is closed).
  // hints: what a direct-placement transport needs (READ destinations).
  void submit(Encode encode, Decode decode, rpc::CallHints hints = {});

  // DESTROY_SESSION and DESTROY_CLIENTID; waits for calls in flight first
  // (bounded by the RPC timeout). A server still finishing calls that timed
  // out answers NFS4ERR_DELAY or NFS4ERR_CLIENTID_BUSY for a moment: each is
  // sent again, 0.1 s doubling to 1 s apart, for up to teardownBudget.
  // Errors are returned, not thrown.
  Error close();

  std::uint64_t clientId() const { return clientId_.load(std::memory_order_relaxed); }
  SessionId id() const {
    std::lock_guard lock(mu_);
    return sessionId_;
  }
  const ChannelAttrs& fore() const { return fore_; }
  std::uint32_t leaseSeconds() const { return leaseSeconds_; }
  SessionStats stats() const;
  std::size_t connectionCount() const { return conns_.size(); }
  // Whether connection i is bound to the session and takes calls.
  bool connectionUp(std::size_t i) const;

  // A synchronous round trip for setup and tests: submit() and wait.
  // Must not be called from the transport's I/O thread (it would deadlock).
  Error roundTrip(const Encode& encode, const std::function<Error(CompoundDecoder&)>& decode,
                  const rpc::CallHints& hints = {});

 private:
  struct Request {
    Encode encode;
    Decode decode;
    rpc::CallHints hints;
    unsigned resends =
        0;  // sent again on a new session: bounded, so a server that keeps refusing ends it
    bool changesState =
        false;               // as last encoded: a replay without a cached reply must not run again
    bool replaying = false;  // resent on its slot after a lost connection, not answered yet
    std::size_t conn = 0;    // the connection it last went on
    // When its connection was first lost (or a replay first delayed): it
    // waits for recovery at most recoveryTimeout from then, however many
    // outages follow.
    std::chrono::steady_clock::time_point firstLoss{};
  };
  // How a recovery's unlocked part ended.
  enum class Restored { kBound, kNewSession, kFailed };
  using RequestPtr = std::shared_ptr<Request>;
  // A call in flight when its connection failed, to go again on its slot.
  struct Replay {
    std::uint32_t slot = 0;
    std::uint32_t sequenceId = 0;
    RequestPtr request;
  };
  struct NewSession {
    SessionId id{};
    ChannelAttrs fore;
  };
  // Where a trunk connection stands; only kUp ones carry calls.
  enum class ConnState : int {
    kUp,
    kDown,     // failed: the renewal thread reconnects it, then binds it
    kUnbound,  // connected but not bound to the current session (after a new one)
    kRefused,  // the server would not bind it (or trunk it): left out until a new session
  };
  struct Connection {
    rpc::RpcClient* rpc = nullptr;
    bool otherAddress = false;
    bool corksRounds = false;  // its transport's (Transport::corksRounds)
    std::atomic<ConnState> state{ConnState::kUp};
    // The renewal thread's next try and its backoff (mu_).
    std::chrono::steady_clock::time_point nextAttempt{};
    std::chrono::milliseconds pause{0};
    std::chrono::steady_clock::time_point downSince{};
    Error lostBy;
  };

  // Sends a COMPOUND on slot. A send that fails at once returns its error
  // with the slot still held and decode not called: the caller releases the
  // slot and ends the request, so a queue that fails call after call is
  // drained by a loop, not by recursion.
  Error issue(std::uint32_t slot, std::uint32_t sequenceId, std::uint32_t highest,
              const RequestPtr& request);
  void onReply(std::uint32_t slot, std::uint32_t sequenceId, const Error& error,
               xdr::XdrDecoder& results, const RequestPtr& request);
  // onReply()'s steps: the call failed below NFS (no reply, or an RPC-level
  // rejection); SEQUENCE answered status st; a request the server refused
  // for a lost session waits for a new one (false: it cannot).
  void onCallFailed(std::uint32_t slot, std::uint32_t sequenceId, const Error& error,
                    const RequestPtr& request);
  void onSequenceRefused(std::uint32_t slot, std::uint32_t st, const RequestPtr& request);
  bool waitForNewSession(std::uint32_t slot, std::uint32_t st, const RequestPtr& request);
  // A call whose connection failed keeps its slot and waits for a new
  // connection (false: none can be made, the error stands).
  bool awaitReconnect(std::uint32_t slot, std::uint32_t sequenceId, const RequestPtr& request,
                      const Error& cause);
  void startRecoveryLocked(const Error& cause, bool connection);
  // A replayed call the server had no cached reply for (RETRY_UNCACHED_REP).
  void onUncachedReplay(std::uint32_t slot, const RequestPtr& request);
  // A call unanswered within the RPC timeout on a connection that still
  // looks up (packets dropped with the link up): the connection is taken
  // for dead (RpcClient::presumeDead) and the kConnectionLost returned lets
  // the call ride through on its slot, as a kernel hard mount goes on after
  // timeo x retrans. Any other error, or a connection that cannot be
  // replaced (or a session not yet set up, or closing), is returned as it is.
  Error presumeDeadAfterTimeout(rpc::RpcClient& rpc, const Error& e);
  // Whether a request lost at `now` may still wait for recovery (it sets
  // the request's first loss).
  bool withinRecoveryTime(Request& request) const;
  Error sequenceMismatch(const SequenceResult& seq, std::uint32_t slot,
                         std::uint32_t sequenceId) const;
  // Hands free slots to waiting requests (mu_ held through lock; each
  // issue() runs unlocked). Nothing leaves while the session is replaced.
  void pump(std::unique_lock<std::mutex>& lock);
  // Releases slot and hands free slots to waiting requests. lossCause, when
  // given, is recorded as why the slot was lost (under the same lock).
  void releaseAndPump(std::uint32_t slot, SlotOutcome outcome, const Error* lossCause = nullptr);
  // Retires a slot whose request's fate is unknown, remembering why.
  void retire(std::uint32_t slot, const Error& cause) {
    releaseAndPump(slot, SlotOutcome::kUnknown, &cause);
  }
  // The error for requests once every slot is retired (mu_ held).
  Error everySlotLost() const;
  void renewLoop();
  // The errors of a COMPOUND's results: "OP: NFS4ERR_...", a reply that did
  // not decode, and RECLAIM_COMPLETE's status (COMPLETE_ALREADY, from a
  // session of a client ID that said it before, is success too).
  static Error statusErrorFor(Op op, std::uint32_t status);
  static Error malformedError(const CompoundDecoder& d);
  static Error reclaimCompleteError(std::uint32_t status);
  Error sessionlessRoundTrip(const std::function<void(CompoundEncoder&)>& encode,
                             const std::function<Error(CompoundDecoder&)>& decode) {
    return sessionlessRoundTrip(rpc_, encode, decode);
  }
  Error sessionlessRoundTrip(rpc::RpcClient& rpc,
                             const std::function<void(CompoundEncoder&)>& encode,
                             const std::function<Error(CompoundDecoder&)>& decode);
  Error exchangeId();
  // SessionTrunk.cpp: the connections of a trunked session.
  static std::vector<std::unique_ptr<Connection>> makeConnections(
      const std::vector<SessionConnection>& connections);
  // The server no longer has the session (or its client ID).
  static bool sessionGone(const Error& e);
  static std::string seconds(std::chrono::steady_clock::duration d);  // "1.5 s"
  // Binds every connection but the first at setup.
  Error joinTrunk();
  // The least loaded connection that is up (none: the first, whose call
  // then fails and starts a recovery).
  std::size_t pick() const;
  // The least loaded connection that is up, ties in turn; thisThreadOnly:
  // of those this I/O thread serves (none: conns_.size()).
  std::size_t leastLoaded(bool thisThreadOnly) const;
  // pick() from a reply callback over transports that cork a loop's round.
  std::size_t pickForRound() const;
  bool anyUpLocked() const;
  // Connection i failed: the renewal thread reconnects it (mu_ held).
  void markDownLocked(std::size_t i, const Error& cause);
  // After a new session: the others must bind to it (mu_ held).
  void unbindOthersLocked();
  // Reconnects and binds connection i (EXCHANGE_ID first for another address).
  Error rejoin(Connection& c, bool reconnect);
  // Whether EXCHANGE_ID on c shows the server the first connection reached.
  Error sameServer(rpc::RpcClient& rpc);
  // The renewal thread's turn at connections that are not up and due.
  void restoreConnections(std::unique_lock<std::mutex>& lock);
  // How long until a connection is due for another try (max(): none).
  std::chrono::steady_clock::duration untilConnectionDueLocked() const;
  // A call of a failed connection: again over another one of the trunk, or
  // (none up) after a recovery. mu_ held.
  void keepForReplayLocked(Replay replay, const Error& cause);
  // CREATE_SESSION for clientId_; refused: the server answered with an error status.
  Error createSession(NewSession& out, bool& refused);
  // Replaces a session the server lost; runs on the renewal thread (mu_ held
  // through lock, released while it talks to the server).
  void recover(std::unique_lock<std::mutex>& lock);
  // recover()'s unlocked part: reconnect (with backoff, until deadline) and
  // bind, or a new session when the server lost ours.
  // dropOld: the server may still have the session being replaced.
  Restored restore(std::chrono::steady_clock::time_point deadline, bool sessionLost, bool dropOld,
                   NewSession& fresh, SlotTable& table, bool& newClientId, Error& error,
                   std::string& reclaimed);
  // Binds connection 0 to the session being replaced and destroys it there.
  void dropLiveSession();
  Error reconnectOnce();
  Error bindConnection() { return bindConnection(rpc_); }
  Error bindConnection(rpc::RpcClient& rpc);
  // recover()'s endings, mu_ held through lock.
  void resumeOnBoundConnection(std::unique_lock<std::mutex>& lock);
  void resendDelayedReplays(std::unique_lock<std::mutex>& lock);
  void resumeOnNewSession(std::unique_lock<std::mutex>& lock, NewSession& fresh, SlotTable& table);
  void failRecovery(std::unique_lock<std::mutex>& lock, const Error& e);
  std::string outageSummary(Restored how, bool newClientId, const std::string& reclaimed) const;
  // CREATE_SESSION (after EXCHANGE_ID when the client ID is gone) and
  // RECLAIM_COMPLETE on it, with the reclaims before and reopens after it
  // under a new client ID; table gets the new session's slots.
  Error establishNewSession(NewSession& out, SlotTable& table, bool& newClientId,
                            std::string& reclaimed);
  // One COMPOUND on a session being set up, on the lowest free slot of table.
  Error callOnNewSession(const SessionId& id, SlotTable& table,
                         const std::function<void(CompoundEncoder&)>& encode,
                         const std::function<Error(CompoundDecoder&)>& decode);
  Error destroySessionOnServer(const SessionId& session, rpc::RpcClient& via);
  Error destroyClientIdOnServer();
  // Runs destroy again while it fails with DELAY or CLIENTID_BUSY, within
  // options_.teardownBudget; returns its last result.
  Error destroyWhenNotBusy(const std::function<Error()>& destroy);

  std::vector<std::unique_ptr<Connection>> conns_;  // fixed after setup; [0] set the session up
  mutable std::atomic<std::size_t> rotor_{0};       // where pick() starts looking: ties go round
  static constexpr std::size_t kAffinitySlack =
      2;                 // calls more than the least loaded that pick() still stays for
  rpc::RpcClient& rpc_;  // the first connection: setup and recovery
  SessionOptions options_;
  ExchangeIdResult server_;           // the first EXCHANGE_ID's answer: who a trunk must reach
  Verifier verifier_{};               // EXCHANGE_ID's: the same one again finds our client record
  std::uint32_t createSequence_ = 0;  // csa_sequence of the next CREATE_SESSION
  std::atomic<std::uint64_t> clientId_{0};  // read by OPEN builders while a recovery may replace it
  SessionId sessionId_{};
  ChannelAttrs fore_;
  std::uint32_t leaseSeconds_ = 90;

  mutable std::mutex mu_;
  std::condition_variable idle_;
  SlotTable slots_{1};
  std::deque<RequestPtr> waiting_;
  bool closed_ = false;
  bool recovering_ = false;      // connection or session lost: requests wait for it to come back
  bool connectionDown_ = false;  // ...because the connection failed (else the session is gone)
  std::vector<Replay> replays_;  // calls in flight when it failed, each holding its slot
  // Replays the server answered NFS4ERR_DELAY (still running the original):
  // sent again on their slots after kReplayPause, by the renewal thread.
  std::vector<Replay> delayedReplays_;
  static constexpr std::chrono::milliseconds kReplayPause{100};
  bool needNewSession_ = false;  // a recovery failed with calls of unknown fate on the slots
  // A new client ID was made and RECLAIM_COMPLETE not yet said on it: the
  // next attempt reclaims too (renewal thread only).
  bool reclaimPending_ = false;
  // The session is alive on the server but this connection could not be
  // bound to it: replays that change state cannot go on a new one (renewal thread).
  bool leftLiveSession_ = false;
  std::chrono::steady_clock::time_point recoveryDeadline_{};  // of the recovery under way
  std::chrono::steady_clock::time_point outageStart_;
  bool canRecover_ = false;  // the renewal thread, which replaces sessions, runs (not during setup)
  Error lostBy_;             // the refusal that started the replacement
  Error lastLoss_;           // why the most recently retired slot was retired
  std::chrono::steady_clock::time_point lastReply_;
  SessionStats stats_;

  std::condition_variable renewWake_;
  bool stopRenew_ = false;
  std::thread renewThread_;
};

}  // namespace nfsrdma::nfs4
