// A scripted NFSv4.1 server on a ScriptedPeer, for nfs4::Session and Client tests.
//
// It answers just enough for a session's life: EXCHANGE_ID, CREATE_SESSION,
// SEQUENCE, RECLAIM_COMPLETE, PUTROOTFH, GETATTR, DESTROY_SESSION and
// DESTROY_CLIENTID; and for a Client's I/O on files in its root directory:
// PUTFH, LOOKUP, GETFH, OPEN, READ, WRITE, COMMIT, CLOSE. Any operation can
// be scripted to fail with a status (NFS4ERR_DELAY, say). A test scripts what happens to the
// next SEQUENCE-bearing COMPOUNDs (a wrong slot, sequence id or session in
// the reply, an error status, silence, a hang-up, raw damaged results), and
// the server checks the client in turn: slot ids within the grant, one
// request per slot at a time, sequence ids advancing by exactly one after a
// request was executed. Replies can be held back and released in batches, so
// the test sees how many requests the client really has in flight.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "client/nfs4/Compound.h"
#include "tests/unit/client/ScriptedPeer.h"

namespace nfsrdma::testpeer {

struct SequenceArgs {
  nfs4::SessionId session{};
  std::uint32_t sequenceId = 0;
  std::uint32_t slot = 0;
  std::uint32_t highestSlot = 0;
  bool cacheThis = false;
};

// A COMPOUND call as the server decoded it.
struct CompoundCall {
  // The arguments of a file operation (which of them, by its op).
  struct FileArgs {
    Bytes fh;                    // PUTFH
    std::string name;            // LOOKUP, OPEN
    bool create = false;         // OPEN
    std::uint64_t offset = 0;    // READ, WRITE
    std::uint32_t count = 0;     // READ
    Bytes data;                  // WRITE
    std::uint32_t claim = 0;     // OPEN: CLAIM_NULL, CLAIM_PREVIOUS or CLAIM_FH
    std::uint8_t stateBoot = 0;  // READ, WRITE, CLOSE: the server start the stateid is of
  };
  RpcCall rpc;
  std::vector<std::uint32_t> ops;  // op numbers; parsing stops after an op it does not know
  std::vector<FileArgs> args;      // one per op
  std::optional<SequenceArgs> sequence;
  nfs4::Bitmap getAttrRequest;
  nfs4::ChannelAttrs foreRequested;  // CREATE_SESSION
  std::uint32_t createSessionSequence = 0;
  std::uint64_t createSessionClientId = 0;
  nfs4::SessionId bindSession{};  // BIND_CONN_TO_SESSION
};

// Decodes COMPOUND arguments; nullopt if they do not parse.
std::optional<CompoundCall> parseCompound(const RpcCall& call);

// The SEQUENCE result about to be sent; a script may change any field.
struct SequenceReply {
  std::uint32_t status = nfs4::kNfs4Ok;
  nfs4::SessionId session{};
  std::uint32_t sequenceId = 0;
  std::uint32_t slot = 0;
  std::uint32_t highestSlot = 0;
  std::uint32_t targetHighestSlot = 0;
  std::uint32_t statusFlags = 0;
};

// What to do with one SEQUENCE-bearing COMPOUND.
struct SequenceScript {
  std::function<void(SequenceReply&)> edit;  // change the SEQUENCE result
  bool drop = false;                         // never answer
  bool hangUp = false;                       // close the connection instead of answering
  std::chrono::milliseconds delay{0};        // answer this late (the server does nothing meanwhile)
  // Run it (its reply goes into the slot's reply cache) but hang up instead
  // of answering: a reply lost with the connection.
  bool loseReply = false;
  // Run it (reply cached) and send nothing, keeping the connection: a reply
  // lost in a silent partition (packets dropped with the link up).
  bool swallowReply = false;
  // Never seen: the request was lost on the way (a silent partition), so
  // nothing runs and the slot stays free for it.
  bool vanish = false;
  // COMPOUND4res bytes to send instead of the real results (damaged replies).
  std::function<Bytes(const CompoundCall&)> rawResults;
};

inline SequenceScript editSequence(std::function<void(SequenceReply&)> edit) {
  SequenceScript s;
  s.edit = std::move(edit);
  return s;
}
inline SequenceScript dropSequence() {
  SequenceScript s;
  s.drop = true;
  return s;
}
inline SequenceScript delaySequence(std::chrono::milliseconds delay) {
  SequenceScript s;
  s.delay = delay;
  return s;
}
inline SequenceScript loseReplyOnSequence() {
  SequenceScript s;
  s.loseReply = true;
  return s;
}
inline SequenceScript swallowReplyOnSequence() {
  SequenceScript s;
  s.swallowReply = true;
  return s;
}
inline SequenceScript vanishSequence() {
  SequenceScript s;
  s.vanish = true;
  return s;
}
inline SequenceScript hangUpOnSequence() {
  SequenceScript s;
  s.hangUp = true;
  return s;
}
inline SequenceScript rawSequenceResults(std::function<Bytes(const CompoundCall&)> results) {
  SequenceScript s;
  s.rawResults = std::move(results);
  return s;
}

struct FakeServerConfig {
  std::uint32_t grantedSlots = 4;  // ca_maxrequests in the CREATE_SESSION reply
  std::uint32_t leaseSeconds = 75;
  std::uint32_t exchangeIdStatus = nfs4::kNfs4Ok;
  std::uint32_t createSessionStatus = nfs4::kNfs4Ok;
  std::uint64_t clientId = 0x1122334455667788ULL;
  // SEQUENCE COMPOUNDs are held until this many wait (or the client goes
  // quiet), then answered together in reverse order; 1 answers at once.
  std::size_t holdBatch = 1;
  // The root directory's maxread and maxwrite attributes; 0: not returned.
  std::uint64_t maxRead = 0;
  std::uint64_t maxWrite = 0;
  // A READ returns, a WRITE takes at most this many bytes; 0: all asked for.
  std::uint32_t shortRead = 0;
  std::uint32_t shortWrite = 0;
};

class FakeNfs41Server {
 public:
  struct Stats {
    std::size_t compounds = 0;
    std::size_t sequenced = 0;    // COMPOUNDs that started with SEQUENCE
    std::size_t maxInFlight = 0;  // most SEQUENCE COMPOUNDs received and not yet answered
    std::size_t destroySession = 0;
    std::size_t destroyClientId = 0;
    std::size_t exchangeId = 0;
    std::size_t createSession = 0;                    // answered with a new session
    std::vector<std::vector<std::uint32_t>> opLists;  // every COMPOUND's ops, in arrival order
    std::vector<std::uint32_t> readCounts;            // every READ's count, as asked
    std::vector<std::size_t> writeSizes;              // every WRITE's data size, as sent
    std::vector<std::string> violations;              // protocol errors of the client
    std::size_t bindConn = 0;                         // BIND_CONN_TO_SESSION on the current session
    // (slot, sequence id) of each request answered from the reply cache.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> replays;
    std::vector<bool> cacheThis;  // sa_cachethis of every SEQUENCE, in arrival order
  };

  // Starts answering on peer (which must outlive this object).
  FakeNfs41Server(ScriptedPeer& peer, FakeServerConfig config);
  ~FakeNfs41Server();  // stops answering
  FakeNfs41Server(const FakeNfs41Server&) = delete;
  FakeNfs41Server& operator=(const FakeNfs41Server&) = delete;

  // Serves another connection too (a client that reconnected); peer must
  // outlive this object. Sessions, slots and the reply cache are shared.
  void attach(ScriptedPeer& peer);
  // Applies to the next SEQUENCE COMPOUND that arrives (scripts queue in order).
  void scriptNextSequence(SequenceScript script);
  // Applies to every SEQUENCE COMPOUND once the queued scripts are used up.
  void scriptEverySequence(SequenceScript script);

  Stats stats() const;
  // The newest session: each CREATE_SESSION after the first makes another
  // one with a fresh slot table (the old one is then unknown).
  nfs4::SessionId sessionId() const {
    std::lock_guard lock(mu_);
    return sessionId_;
  }
  // The next CREATE_SESSION fails with status (e.g. STALE_CLIENTID).
  void failNextCreateSession(std::uint32_t status);
  // The next op (any but SEQUENCE) fails with status (e.g. DELAY,
  // CLIENTID_BUSY) and ends its COMPOUND; calls queue in order per op.
  void failNextOp(nfs4::Op op, std::uint32_t status);
  // failNextOp for DESTROY_SESSION or DESTROY_CLIENTID.
  void failNextDestroy(nfs4::Op op, std::uint32_t status) { failNextOp(op, status); }
  // When the next COMPOUND with op arrives, the server restarts instead of
  // answering it, as rpc.nfsd 0 and a start again do: every connection is
  // hung up, the session and client ID are forgotten (SEQUENCE and the bind
  // get BADSESSION, CREATE_SESSION STALE_CLIENTID; EXCHANGE_ID makes a new
  // client ID), stateids of before are refused (BAD_STATEID), and the write
  // verifier changes. Opens are reclaimed with CLAIM_PREVIOUS (or CLAIM_FH).
  void restartOnNext(nfs4::Op op);
  std::uint32_t restarts() const {
    std::lock_guard lock(mu_);
    return boot_;
  }
  // A regular file in the root directory, and what it holds now.
  void addFile(const std::string& name, Bytes contents = {});
  std::optional<Bytes> file(const std::string& name) const;
  // Waits (bounded) until n SEQUENCE COMPOUNDs have arrived.
  bool waitSequenced(std::size_t n, std::chrono::milliseconds timeout = kPeerWait);

 private:
  struct Held {
    CompoundCall call;
    SequenceScript script;
  };

  void onCall(ScriptedPeer& peer, const RpcCall& call);
  // Restarts when c holds the op restartOnNext() named; true if it did.
  bool restartFor(const CompoundCall& c);
  void onIdle(ScriptedPeer& peer);
  // Checks a SEQUENCE against the slot table; call with mu_ held.
  void checkSequenceLocked(const SequenceArgs& args);
  std::uint32_t takeScriptedStatus(std::uint32_t op);  // the next scripted status, else NFS4_OK
  // Answers one file operation (status and results) on the current file
  // handle cur; returns the status.
  std::uint32_t answerFileOp(std::uint32_t op, const CompoundCall::FileArgs& a, Bytes& cur,
                             xdr::XdrEncoder& enc);
  // GETATTR of what cur names: type, size, maxread, maxwrite as requested.
  void putFileAttrs(const Bytes& cur, const nfs4::Bitmap& request, xdr::XdrEncoder& enc);
  // Builds and sends the reply to c (mu_ not held).
  void answer(ScriptedPeer& peer, const CompoundCall& c, const SequenceScript& script);
  // Runs c and returns its COMPOUND4res, kept in the slot's reply cache.
  Bytes build(const CompoundCall& c, const SequenceScript& script);
  void flushHeld(ScriptedPeer& peer);

  ScriptedPeer& peer_;
  const FakeServerConfig config_;
  nfs4::SessionId sessionId_;               // guarded by mu_
  bool sessionLive_ = true;                 // false from a restart to the next CREATE_SESSION (mu_)
  std::uint64_t clientId_;                  // (mu_)
  std::uint8_t boot_ = 0;                   // restarts so far (mu_)
  std::optional<std::uint32_t> restartOn_;  // (mu_)
  std::uint32_t sessionsCreated_ = 0;
  std::deque<std::uint32_t> createSessionFailures_;
  std::map<std::uint32_t, std::deque<std::uint32_t>> opFailures_;  // by op
  std::map<std::string, Bytes> files_;                             // by name

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<SequenceScript> scripts_;
  std::optional<SequenceScript> everySequence_;
  std::vector<Held> held_;
  std::map<std::uint32_t, std::uint32_t> lastSequenceId_;  // per slot, last executed
  std::map<std::uint32_t, Bytes> replyCache_;              // per slot, the last reply's results
  std::vector<ScriptedPeer*> peers_;                       // every connection served
  std::set<std::uint32_t> busySlots_;                      // received, not answered
  Stats stats_;
};

}  // namespace nfsrdma::testpeer
