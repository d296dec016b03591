// nfs4::Session against a scripted NFSv4.1 server: setup (EXCHANGE_ID,
// CREATE_SESSION, RECLAIM_COMPLETE, GETATTR lease_time), the SEQUENCE check
// on every reply (wrong slot, sequence id or session; error statuses;
// damaged results), slot accounting under load (never more requests in
// flight than slots granted), and failures (silence, hang-up, setup errors)
// that must end every request's callback exactly once, in bounded time.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/nfs4/Nfs4Status.h"
#include "client/nfs4/Session.h"
#include "client/rpc/RpcClient.h"
#include "tests/unit/client/FakeServer.h"
#include "tests/unit/client/ScriptedPeer.h"

namespace nfsrdma::testpeer {
namespace {

using namespace std::chrono_literals;
using nfs4::Op;

constexpr auto kTimeout = 300ms;  // in the tests about timeouts
// Elsewhere a timeout must not fire even when a loaded machine stalls the
// server thread for a while.
constexpr auto kReplyTimeout = 5s;
constexpr auto kWait = 3s;
constexpr auto kTimeoutSlack =
    2 * std::chrono::milliseconds(transport::Transport::kTickIntervalMs) + 500ms;
constexpr std::uint32_t kAskedSlots = 8;

struct Outcome {
  int fired = 0;
  Error error;
  bool hadResults = false;
};

// Decode callbacks for numbered submissions.
class Completions {
 public:
  nfs4::Session::Decode callback(std::size_t i) {
    return [this, i](const Error& error, nfs4::CompoundDecoder* results) {
      std::lock_guard lock(mu_);
      Outcome& o = outcomes_[i];
      if (++o.fired == 1) ++distinct_;
      o.error = error;
      o.hadResults = results != nullptr;
      cv_.notify_all();
    };
  }
  bool waitAll(std::size_t n, std::chrono::milliseconds timeout = kWait) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] {
      if (distinct_ < n) return false;  // cheap while many are still to come
      std::size_t done = 0;
      for (const auto& [i, o] : outcomes_) done += (i < n && o.fired > 0) ? 1 : 0;
      return done == n;
    });
  }
  Outcome get(std::size_t i) const {
    std::lock_guard lock(mu_);
    auto it = outcomes_.find(i);
    return it == outcomes_.end() ? Outcome{} : it->second;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::size_t, Outcome> outcomes_;
  std::size_t distinct_ = 0;  // requests whose callback fired at least once
};

class SessionTest : public ::testing::Test {
 protected:
  // Connects an RpcClient to a fake server with this configuration.
  void startServer(FakeServerConfig config = {},
                   std::chrono::milliseconds timeout = kReplyTimeout) {
    timeout_ = timeout;
    Connection c = connectSocketPair();
    peer_ = std::move(c.peer);
    server_ = std::make_unique<FakeNfs41Server>(*peer_, config);
    rpc::AuthSysParams sys;
    sys.machineName = "session-test";
    sys.uid = 1000;
    sys.gid = 1000;
    rpc_ = std::make_unique<rpc::RpcClient>(std::move(c.transport), nfs4::kNfsProgram,
                                            nfs4::kNfsVersion, rpc::Credential::sys(sys), timeout);
  }
  static nfs4::SessionOptions options() {
    nfs4::SessionOptions o;
    o.slots = kAskedSlots;
    o.ownerId = "session-test-owner";
    return o;
  }
  // A server with this configuration and a session set up against it.
  void startSession(FakeServerConfig config = {},
                    std::chrono::milliseconds timeout = kReplyTimeout) {
    startServer(config, timeout);
    nfs4::SessionOptions o = options();
    o.teardownBudget = teardownBudget_;
    o.recoveryTimeout = recoveryTimeout_;
    o.onRecovered = [this](const std::string& what) {
      std::lock_guard lock(noticesMu_);
      notices_.push_back(what);
    };
    session_ = std::make_unique<nfs4::Session>(*rpc_, o);
  }
  // A lost connection is replaced by a new socketpair that the same fake
  // server serves (one session, slot table and reply cache across them).
  void enableReconnect() {
    rpc_->setReconnect([this] {
      Connection c = connectSocketPair();
      std::lock_guard lock(noticesMu_);
      extraPeers_.push_back(std::move(c.peer));
      server_->attach(*extraPeers_.back());
      return std::unique_ptr<transport::Transport>(std::move(c.transport));
    });
  }
  std::vector<std::string> notices() {
    std::lock_guard lock(noticesMu_);
    return notices_;
  }
  // Submits a COMPOUND of SEQUENCE alone.
  void submitBare(std::size_t i) {
    session_->submit([](nfs4::CompoundEncoder&) {}, completions_.callback(i));
  }
  Outcome runBare(std::size_t i) {
    submitBare(i);
    EXPECT_TRUE(completions_.waitAll(i + 1, timeout_ + kTimeoutSlack + kWait)) << "request " << i;
    return completions_.get(i);
  }
  void expectNoViolations() {
    for (const auto& v : server_->stats().violations)
      ADD_FAILURE() << "client broke the protocol: " << v;
  }

  // Destroyed bottom-up: session (DESTROY_SESSION, DESTROY_CLIENTID while the
  // server still answers), then the RPC client, the server, the peer.
  Completions completions_;
  std::chrono::milliseconds timeout_ = kReplyTimeout;
  std::chrono::milliseconds teardownBudget_{10000};  // SessionOptions' default
  std::chrono::milliseconds recoveryTimeout_{5000};
  std::mutex noticesMu_;
  std::vector<std::string> notices_;
  std::unique_ptr<ScriptedPeer> peer_;
  std::vector<std::unique_ptr<ScriptedPeer>> extraPeers_;  // reconnections, outliving the server
  std::unique_ptr<FakeNfs41Server> server_;
  std::unique_ptr<rpc::RpcClient> rpc_;
  std::unique_ptr<nfs4::Session> session_;
};

constexpr std::uint32_t op(Op o) {
  return static_cast<std::uint32_t>(o);
}

// ------------------------------------------------------------ setup

TEST_F(SessionTest, SetsUpWithTheGrantedSlotsAndLeaseAndClosesCleanly) {
  FakeServerConfig config;
  config.grantedSlots = 4;
  config.leaseSeconds = 75;
  startSession(config);
  EXPECT_EQ(session_->clientId(), config.clientId);
  EXPECT_EQ(session_->id(), server_->sessionId());
  EXPECT_EQ(session_->fore().maxRequests, 4U);
  EXPECT_EQ(session_->stats().slots, 4U);
  EXPECT_EQ(session_->leaseSeconds(), 75U);
  for (std::size_t i = 0; i < 3; ++i) {
    const Outcome o = runBare(i);
    EXPECT_FALSE(o.error) << o.error.message();
    EXPECT_TRUE(o.hadResults);
  }
  EXPECT_FALSE(session_->close());
  const auto s = server_->stats();
  const std::vector<std::vector<std::uint32_t>> expected = {
      {op(Op::kExchangeId)},
      {op(Op::kCreateSession)},
      {op(Op::kSequence), op(Op::kReclaimComplete)},
      {op(Op::kSequence), op(Op::kPutRootFh), op(Op::kGetAttr)},
      {op(Op::kSequence)},
      {op(Op::kSequence)},
      {op(Op::kSequence)},
      {op(Op::kDestroySession)},
      {op(Op::kDestroyClientId)},
  };
  EXPECT_EQ(s.opLists, expected);
  expectNoViolations();
}

TEST_F(SessionTest, CreateSessionErrorThrowsWithTheStatusName) {
  FakeServerConfig config;
  config.createSessionStatus = 10022;  // NFS4ERR_STALE_CLIENTID
  startServer(config);
  try {
    nfs4::Session session(*rpc_, options());
    FAIL() << "the session was created";
  } catch (const NfsException& e) {
    EXPECT_EQ(e.code(), nfs4::statusError(10022));
    EXPECT_STREQ(e.what(), "CREATE_SESSION: NFS4ERR_STALE_CLIENTID (stale client id)");
  }
  // The client ID from EXCHANGE_ID is given back, not left until its lease ends.
  EXPECT_EQ(server_->stats().destroyClientId, 1U);
  EXPECT_EQ(server_->stats().destroySession, 0U);
}

TEST_F(SessionTest, ExchangeIdErrorThrowsWithTheStatusName) {
  FakeServerConfig config;
  config.exchangeIdStatus = 10006;  // NFS4ERR_SERVERFAULT
  startServer(config);
  try {
    nfs4::Session session(*rpc_, options());
    FAIL() << "the session was created";
  } catch (const NfsException& e) {
    EXPECT_EQ(e.code(), nfs4::statusError(10006));
    EXPECT_STREQ(e.what(), "EXCHANGE_ID: NFS4ERR_SERVERFAULT (server fault)");
  }
  EXPECT_EQ(server_->stats().compounds, 1U);
}

TEST_F(SessionTest, CreateSessionGrantingNoSlotsThrows) {
  FakeServerConfig config;
  config.grantedSlots = 0;
  startServer(config);
  try {
    nfs4::Session session(*rpc_, options());
    FAIL() << "the session was created";
  } catch (const NfsException& e) {
    EXPECT_EQ(e.code(), make_error_code(ClientErrc::kMalformedReply));
    EXPECT_STREQ(e.what(), "CREATE_SESSION granted no slots: malformed reply from the server");
  }
  EXPECT_EQ(server_->stats().destroySession, 1U);
  EXPECT_EQ(server_->stats().destroyClientId, 1U);
}

TEST_F(SessionTest, CreateSessionGrantingFarMoreSlotsThanAskedIsBounded) {
  FakeServerConfig config;
  config.grantedSlots = 0xffffffffU;
  startServer(config);
  // Either clamp to what was asked for or refuse with an NfsException; any
  // other exception, or an abort, fails.
  try {
    nfs4::Session session(*rpc_, options());
    EXPECT_LE(session.fore().maxRequests, kAskedSlots);
    EXPECT_LE(session.stats().slots, kAskedSlots);
  } catch (const NfsException& e) {
    SUCCEED() << e.what();
  }
}

TEST_F(SessionTest, PeerThatNeverAnswersSetupFailsWithinTheTimeout) {
  startServer({}, kTimeout);
  peer_->stopServing();  // nobody answers EXCHANGE_ID
  const auto t0 = std::chrono::steady_clock::now();
  try {
    nfs4::Session session(*rpc_, options());
    FAIL() << "the session was created";
  } catch (const NfsException& e) {
    EXPECT_EQ(e.code(), make_error_code(ClientErrc::kTimedOut));
  }
  EXPECT_LE(std::chrono::steady_clock::now() - t0, kTimeout + kTimeoutSlack);
}

// ------------------------------------------------------------ the SEQUENCE check

// After setup the client used slot 0 twice (RECLAIM_COMPLETE, GETATTR), so
// the next request goes out on slot 0 with sequence id 3.
TEST_F(SessionTest, ReplyForAnotherSlotIsASequenceMismatch) {
  startSession();
  server_->scriptNextSequence(editSequence([](SequenceReply& r) { r.slot = 1; }));
  const Outcome o = runBare(0);
  EXPECT_EQ(o.fired, 1);
  EXPECT_EQ(o.error.code, make_error_code(ClientErrc::kSequenceMismatch)) << o.error.message();
  EXPECT_EQ(o.error.context, "SEQUENCE reply for slot 1 sequence 3, expected slot 0 sequence 3");
  EXPECT_FALSE(o.hadResults);
  // The slot is retired; the next request runs on another one.
  const Outcome next = runBare(1);
  EXPECT_FALSE(next.error) << next.error.message();
  EXPECT_EQ(session_->stats().retiredSlots, 1U);
  expectNoViolations();
}

TEST_F(SessionTest, ReplyWithAnotherSequenceIdIsASequenceMismatch) {
  startSession();
  server_->scriptNextSequence(editSequence([](SequenceReply& r) { r.sequenceId += 5; }));
  const Outcome o = runBare(0);
  EXPECT_EQ(o.error.code, make_error_code(ClientErrc::kSequenceMismatch)) << o.error.message();
  EXPECT_EQ(o.error.context, "SEQUENCE reply for slot 0 sequence 8, expected slot 0 sequence 3");
  EXPECT_FALSE(runBare(1).error);
  expectNoViolations();
}

TEST_F(SessionTest, ReplyForAnotherSessionIsASequenceMismatch) {
  startSession();
  server_->scriptNextSequence(editSequence([](SequenceReply& r) { r.session[0] ^= 0xffU; }));
  const Outcome o = runBare(0);
  EXPECT_EQ(o.error.code, make_error_code(ClientErrc::kSequenceMismatch)) << o.error.message();
  EXPECT_NE(o.error.context.find("slot 0"), std::string::npos) << o.error.message();
  EXPECT_FALSE(runBare(1).error);
  expectNoViolations();
}

TEST_F(SessionTest, SequenceErrorStatusIsReportedByNameAndTheSlotIsReused) {
  startSession();
  server_->scriptNextSequence(editSequence([](SequenceReply& r) { r.status = nfs4::kErrDelay; }));
  const Outcome o = runBare(0);
  EXPECT_EQ(o.fired, 1);
  EXPECT_EQ(o.error.code, nfs4::statusError(nfs4::kErrDelay));
  EXPECT_EQ(o.error.message(), "SEQUENCE: NFS4ERR_DELAY (server busy, retry later)");
  // SEQUENCE failed, so nothing ran: the same slot and sequence id go out
  // again (the server checks), and no slot is retired.
  EXPECT_FALSE(runBare(1).error);
  EXPECT_EQ(session_->stats().retiredSlots, 0U);
  expectNoViolations();
}

// ------------------------------------------------------------ a lost session

// NFS4ERR_BADSESSION: the server no longer knows the session (our lease ran
// out while the process was stopped, or it restarted). A new session takes
// its place and the refused request goes again; the caller sees success.
TEST_F(SessionTest, BadSessionIsReplacedAndTheRefusedRequestGoesAgain) {
  startSession();
  const nfs4::SessionId first = session_->id();
  server_->scriptNextSequence(
      editSequence([](SequenceReply& r) { r.status = nfs4::kErrBadSession; }));
  const Outcome o = runBare(0);
  EXPECT_FALSE(o.error) << o.error.message();
  EXPECT_TRUE(o.hadResults);
  EXPECT_EQ(session_->stats().recoveries, 1U);
  EXPECT_NE(session_->id(), first);
  EXPECT_EQ(session_->id(), server_->sessionId());
  EXPECT_FALSE(runBare(1).error);
  const auto s = server_->stats();
  EXPECT_EQ(s.createSession, 2U);
  EXPECT_EQ(s.exchangeId, 1U);  // the client ID still stood
  // After setup: the refused SEQUENCE, the new session, RECLAIM_COMPLETE on
  // it, the same request again, then the next one.
  const std::vector<std::vector<std::uint32_t>> tail(s.opLists.end() - 5, s.opLists.end());
  const std::vector<std::vector<std::uint32_t>> expected = {
      {op(Op::kSequence)}, {op(Op::kCreateSession)}, {op(Op::kSequence), op(Op::kReclaimComplete)},
      {op(Op::kSequence)}, {op(Op::kSequence)},
  };
  EXPECT_EQ(tail, expected);
  expectNoViolations();
}

// The client ID went with the lease too: CREATE_SESSION says
// STALE_CLIENTID, and a new EXCHANGE_ID comes first.
TEST_F(SessionTest, StaleClientIdDuringRecoveryExchangesIdsAgain) {
  startServer();
  std::vector<std::string> notices;
  nfs4::SessionOptions so = options();
  so.onReplaced = [&notices](const std::string& what) { notices.push_back(what); };
  session_ = std::make_unique<nfs4::Session>(*rpc_, so);
  server_->failNextCreateSession(nfs4::kErrStaleClientId);
  server_->scriptNextSequence(
      editSequence([](SequenceReply& r) { r.status = nfs4::kErrDeadSession; }));
  const Outcome o = runBare(0);
  EXPECT_FALSE(o.error) << o.error.message();
  const auto s = server_->stats();
  EXPECT_EQ(s.exchangeId, 2U);
  EXPECT_EQ(s.createSession, 2U);
  EXPECT_EQ(session_->stats().recoveries, 1U);
  ASSERT_EQ(notices.size(), 1U);
  EXPECT_EQ(notices[0],
            "the server no longer knew this client's session (SEQUENCE: NFS4ERR_DEADSESSION "
            "(session is dead)); a "
            "new session replaced it under a new client ID: files opened before are no longer open "
            "on the server (0.0 s without service)");
  expectNoViolations();
}

// ganesha answers SEQUENCE with NFS4ERR_EXPIRED between the end of the
// lease and its reaper's removal of the client: the same replacement.
TEST_F(SessionTest, ExpiredAtSequenceIsRecoveredLikeALostSession) {
  startSession();
  server_->failNextCreateSession(nfs4::kErrStaleClientId);
  server_->scriptNextSequence(editSequence([](SequenceReply& r) { r.status = nfs4::kErrExpired; }));
  const Outcome o = runBare(0);
  EXPECT_FALSE(o.error) << o.error.message();
  EXPECT_EQ(session_->stats().recoveries, 1U);
  EXPECT_EQ(server_->stats().exchangeId, 2U);
  expectNoViolations();
}

// During setup there is no renewal thread to replace the session: the
// constructor fails with the refusal instead of waiting forever.
TEST_F(SessionTest, ASessionLostDuringSetupFailsTheSetup) {
  startServer({}, kReplyTimeout);
  server_->scriptNextSequence(
      editSequence([](SequenceReply& r) { r.status = nfs4::kErrBadSession; }));
  const auto t0 = std::chrono::steady_clock::now();
  try {
    nfs4::Session s(*rpc_, options());
    ADD_FAILURE() << "setup succeeded on a session the server refused";
  } catch (const NfsException& e) {
    EXPECT_EQ(e.code(), nfs4::statusError(nfs4::kErrBadSession)) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, kReplyTimeout);
}

// A server that refuses every new session too: the request ends with that
// reason after a bounded number of attempts, and the session stays usable
// for a later try.
TEST_F(SessionTest, ASessionThatCannotBeReplacedFailsTheWaitingRequestsWithTheReason) {
  startSession();
  server_->failNextCreateSession(nfs4::kErrServerFault);
  server_->scriptNextSequence(
      editSequence([](SequenceReply& r) { r.status = nfs4::kErrBadSession; }));
  const Outcome o = runBare(0);
  EXPECT_EQ(o.fired, 1);
  EXPECT_EQ(o.error.code, nfs4::statusError(nfs4::kErrServerFault));
  EXPECT_EQ(
      o.error.message(),
      "replacing the session the server lost: CREATE_SESSION: NFS4ERR_SERVERFAULT (server fault)");
  EXPECT_FALSE(runBare(1).error);
}

// Each new session is set up (RECLAIM_COMPLETE passes) and then refuses the
// request again: after two replacements the request ends with the refusal.
TEST_F(SessionTest, ASessionRefusedAgainAndAgainEndsTheRequestInsteadOfLooping) {
  startSession();
  const auto refuse = [] {
    return editSequence([](SequenceReply& r) { r.status = nfs4::kErrBadSession; });
  };
  server_->scriptNextSequence(refuse());
  server_->scriptNextSequence(SequenceScript{});  // RECLAIM_COMPLETE on the new session
  server_->scriptNextSequence(refuse());
  server_->scriptNextSequence(SequenceScript{});
  server_->scriptNextSequence(refuse());
  const Outcome o = runBare(0);
  EXPECT_EQ(o.error.message(), "SEQUENCE: NFS4ERR_BADSESSION (unknown session)");
  EXPECT_EQ(server_->stats().createSession, 3U);  // the first and two replacements
  EXPECT_EQ(session_->stats().recoveries, 2U);
  expectNoViolations();
}

// SEQ_MISORDERED and BADSLOT say the slot itself is unusable: sending on it
// again would fail the same way, so it is retired and the next request
// takes another slot.
TEST_F(SessionTest, SeqMisorderedIsReportedByNameAndRetiresTheSlot) {
  startSession();
  server_->scriptNextSequence(
      editSequence([](SequenceReply& r) { r.status = nfs4::kErrSeqMisordered; }));
  const Outcome o = runBare(0);
  EXPECT_EQ(o.error.code, nfs4::statusError(nfs4::kErrSeqMisordered));
  EXPECT_NE(o.error.message().find("NFS4ERR_SEQ_MISORDERED"), std::string::npos)
      << o.error.message();
  EXPECT_EQ(session_->stats().retiredSlots, 1U);
  EXPECT_FALSE(runBare(1).error);
}

TEST_F(SessionTest, BadSlotRetiresTheSlot) {
  startSession();
  server_->scriptNextSequence(editSequence([](SequenceReply& r) { r.status = nfs4::kErrBadSlot; }));
  const Outcome o = runBare(0);
  EXPECT_EQ(o.error.message(), "SEQUENCE: NFS4ERR_BADSLOT (bad slot)");
  EXPECT_EQ(session_->stats().retiredSlots, 1U);
  EXPECT_FALSE(runBare(1).error);
}

Bytes compoundResults(std::uint32_t status, std::uint32_t count,
                      std::initializer_list<std::uint32_t> rest) {
  XdrBuilder b(256);
  b.enc().putU32(status);
  b.enc().putString("");
  b.enc().putU32(count);
  for (auto w : rest) b.enc().putU32(w);
  return b.bytes();
}

TEST_F(SessionTest, ResultsNotStartingWithSequenceAreMalformed) {
  startSession();
  server_->scriptNextSequence(rawSequenceResults([](const CompoundCall&) {
    return compoundResults(0, 1, {op(Op::kPutRootFh), 0});
  }));
  const Outcome o = runBare(0);
  EXPECT_EQ(o.error.code, make_error_code(ClientErrc::kMalformedReply)) << o.error.message();
  EXPECT_EQ(o.error.context, "COMPOUND reply: result for op 24 where SEQUENCE was expected");
  EXPECT_FALSE(runBare(1).error);
}

TEST_F(SessionTest, ResultsWithNoOperationsAreMalformed) {
  startSession();
  server_->scriptNextSequence(
      rawSequenceResults([](const CompoundCall&) { return compoundResults(0, 0, {}); }));
  const Outcome o = runBare(0);
  EXPECT_EQ(o.error.code, make_error_code(ClientErrc::kMalformedReply)) << o.error.message();
  EXPECT_EQ(o.error.context, "COMPOUND reply: no result for SEQUENCE (the server returned 0)");
}

TEST_F(SessionTest, TruncatedCompoundHeaderIsMalformed) {
  startSession();
  server_->scriptNextSequence(rawSequenceResults([](const CompoundCall&) { return word(0); }));
  const Outcome o = runBare(0);
  EXPECT_EQ(o.error.code, make_error_code(ClientErrc::kMalformedReply)) << o.error.message();
  EXPECT_EQ(o.error.context, "COMPOUND reply: truncated COMPOUND header");
}

TEST_F(SessionTest, TruncatedSequenceResultIsMalformedNotAMismatch) {
  startSession();
  server_->scriptNextSequence(rawSequenceResults([this](const CompoundCall&) {
    Bytes r = compoundResults(0, 1, {op(Op::kSequence), 0});
    const auto sid = server_->sessionId();
    r.insert(r.end(), sid.begin(), sid.end());  // and nothing after the session id
    return r;
  }));
  const Outcome o = runBare(0);
  EXPECT_EQ(o.error.code, make_error_code(ClientErrc::kMalformedReply)) << o.error.message();
  EXPECT_EQ(o.error.context, "COMPOUND reply: truncated SEQUENCE result");
}

TEST_F(SessionTest, HugeTargetHighestSlotDoesNotStallTheSession) {
  // sr_target_highest_slotid 0xffffffff once wrapped targetHighest_ + 1 to
  // zero slots and every later request waited forever (fixed in 8cddf0d).
  startSession({}, kTimeout);
  server_->scriptNextSequence(
      editSequence([](SequenceReply& r) { r.targetHighestSlot = 0xffffffffU; }));
  EXPECT_FALSE(runBare(0).error);
  submitBare(1);
  ASSERT_TRUE(completions_.waitAll(2, kTimeout + kTimeoutSlack)) << "the next request never left";
  EXPECT_FALSE(completions_.get(1).error) << completions_.get(1).error.message();
}

TEST_F(SessionTest, LowerTargetHighestSlotIsHonoured) {
  FakeServerConfig config;
  config.holdBatch = 2;
  startSession(config);
  // From now on the server wants slot 0 only: never two requests at once.
  server_->scriptEverySequence(editSequence([](SequenceReply& r) { r.targetHighestSlot = 0; }));
  EXPECT_FALSE(runBare(0).error);
  const std::size_t before = server_->stats().sequenced;
  for (std::size_t i = 1; i <= 20; ++i) submitBare(i);
  ASSERT_TRUE(completions_.waitAll(21));
  for (std::size_t i = 1; i <= 20; ++i) EXPECT_FALSE(completions_.get(i).error) << i;
  EXPECT_EQ(server_->stats().sequenced - before, 20U);
  EXPECT_EQ(server_->stats().maxInFlight, 1U);
  expectNoViolations();
}

// ------------------------------------------------------------ slots under load

TEST_F(SessionTest, MoreSubmissionsThanSlotsNeverExceedTheGrant) {
  FakeServerConfig config;
  config.grantedSlots = 4;
  config.holdBatch = 4;  // the server answers only when it holds 4 (or the client goes quiet)
  startSession(config);
  constexpr std::size_t kRequests = 200;
  for (std::size_t i = 0; i < kRequests; ++i) submitBare(i);
  ASSERT_TRUE(completions_.waitAll(kRequests));
  for (std::size_t i = 0; i < kRequests; ++i) {
    const Outcome o = completions_.get(i);
    EXPECT_EQ(o.fired, 1) << i;
    EXPECT_FALSE(o.error) << i << ": " << o.error.message();
  }
  const auto s = server_->stats();
  EXPECT_EQ(s.maxInFlight, 4U) << "requests in flight at the server";
  EXPECT_GT(session_->stats().waitedForSlot, 0U);
  expectNoViolations();
}

TEST_F(SessionTest, ConcurrentSubmittersNeverExceedTheGrant) {
  FakeServerConfig config;
  config.grantedSlots = 3;
  config.holdBatch = 3;
  startSession(config);
  constexpr std::size_t kThreads = 4;
  constexpr std::size_t kEach = 50;
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t] {
      for (std::size_t i = 0; i < kEach; ++i) submitBare(t * kEach + i);
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(completions_.waitAll(kThreads * kEach));
  for (std::size_t i = 0; i < kThreads * kEach; ++i) EXPECT_FALSE(completions_.get(i).error) << i;
  EXPECT_LE(server_->stats().maxInFlight, 3U);
  expectNoViolations();
}

// ------------------------------------------------------------ failures

TEST_F(SessionTest, UnansweredRequestTimesOutAndRetiresItsSlot) {
  startSession({}, kTimeout);
  server_->scriptNextSequence(dropSequence());
  const auto t0 = std::chrono::steady_clock::now();
  const Outcome o = runBare(0);
  EXPECT_LE(std::chrono::steady_clock::now() - t0, kTimeout + kTimeoutSlack);
  EXPECT_EQ(o.error.code, make_error_code(ClientErrc::kTimedOut)) << o.error.message();
  EXPECT_EQ(session_->stats().retiredSlots, 1U);
  EXPECT_FALSE(runBare(1).error);  // on the next slot, sequence id 1 (the server checks)
  expectNoViolations();
}

TEST_F(SessionTest, EverySlotLostFailsTheQueueInsteadOfHanging) {
  FakeServerConfig config;
  config.grantedSlots = 2;
  startSession(config, kTimeout);
  server_->scriptEverySequence(dropSequence());
  for (std::size_t i = 0; i < 5; ++i) submitBare(i);
  ASSERT_TRUE(completions_.waitAll(5, kTimeout + kTimeoutSlack + kWait));
  for (std::size_t i = 0; i < 5; ++i) {
    const Outcome o = completions_.get(i);
    EXPECT_EQ(o.fired, 1);
    EXPECT_EQ(o.error.code, make_error_code(ClientErrc::kTimedOut)) << o.error.message();
  }
  EXPECT_EQ(completions_.get(4).error.context, "every session slot was lost to timeouts");
  // Later requests fail at once.
  submitBare(5);
  ASSERT_TRUE(completions_.waitAll(6, 100ms));
  EXPECT_EQ(completions_.get(5).error.code, make_error_code(ClientErrc::kTimedOut));
}

// The server lowered its target to slot 0, and the request on slot 0 was
// then lost: requests used to wait forever for a slot within the target
// while slots 1..3 sat free (and the renewal SEQUENCEs queued up behind them).
TEST_F(SessionTest, TargetSlotLostToATimeoutDoesNotStallTheSession) {
  startSession({}, kTimeout);
  server_->scriptNextSequence(editSequence([](SequenceReply& r) { r.targetHighestSlot = 0; }));
  EXPECT_FALSE(runBare(0).error);
  server_->scriptNextSequence(dropSequence());
  EXPECT_EQ(runBare(1).error.code, make_error_code(ClientErrc::kTimedOut));
  const Outcome o = runBare(2);
  EXPECT_EQ(o.fired, 1) << "the request after the lost one never completed";
  EXPECT_FALSE(o.error) << o.error.message();
  expectNoViolations();
}

// When the connection goes, the queued requests say so (with its code), not "timeouts".
// The server holds the first call and hangs up on the second, so both slots
// are in flight when the connection goes: requests 2..4 cannot be sent on a
// free slot (and fail with the send error) however the threads are scheduled.
TEST_F(SessionTest, EverySlotLostToAClosedConnectionReportsTheConnection) {
  FakeServerConfig config;
  config.grantedSlots = 2;
  startSession(config);
  server_->scriptNextSequence(dropSequence());
  server_->scriptNextSequence(hangUpOnSequence());
  for (std::size_t i = 0; i < 5; ++i) submitBare(i);
  ASSERT_TRUE(completions_.waitAll(5, kWait));
  for (std::size_t i = 0; i < 5; ++i) {
    const Outcome o = completions_.get(i);
    EXPECT_EQ(o.fired, 1) << i;
    EXPECT_EQ(o.error.code, make_error_code(ClientErrc::kConnectionLost))
        << i << ": " << o.error.message();
  }
  EXPECT_EQ(
      completions_.get(4).error.context.rfind("every session slot was lost, the last by: ", 0), 0U)
      << completions_.get(4).error.context;
}

TEST_F(SessionTest, HangUpDuringARequestFailsItAndCloseDoesNotHang) {
  startSession();
  server_->scriptNextSequence(hangUpOnSequence());
  const Outcome o = runBare(0);
  EXPECT_EQ(o.error.code, make_error_code(ClientErrc::kConnectionLost)) << o.error.message();
  submitBare(1);
  ASSERT_TRUE(completions_.waitAll(2, 500ms));
  EXPECT_EQ(completions_.get(1).error.code, make_error_code(ClientErrc::kConnectionLost));
  const auto t0 = std::chrono::steady_clock::now();
  const Error e = session_->close();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  EXPECT_EQ(e.code, make_error_code(ClientErrc::kConnectionLost)) << e.message();
}

TEST_F(SessionTest, DestroyedWithRequestsInFlightAndWaitingEndsEachOnce) {
  FakeServerConfig config;
  config.grantedSlots = 2;
  startSession(config, kTimeout);
  server_->scriptEverySequence(dropSequence());
  for (std::size_t i = 0; i < 6; ++i) submitBare(i);
  ASSERT_TRUE(server_->waitSequenced(2 + 2));  // setup used 2, then one per slot
  const auto t0 = std::chrono::steady_clock::now();
  session_.reset();
  EXPECT_LE(std::chrono::steady_clock::now() - t0, kTimeout + kTimeoutSlack + 1s);
  for (std::size_t i = 0; i < 6; ++i) {
    const Outcome o = completions_.get(i);
    EXPECT_EQ(o.fired, 1) << "request " << i;
    EXPECT_TRUE(o.error) << "request " << i;
  }
}

TEST_F(SessionTest, CloseWithRequestsStillQueuedForASlotFailsThemAndSendsNothingAfterward) {
  FakeServerConfig config;
  config.grantedSlots = 1;
  constexpr std::chrono::milliseconds kSlowTimeout{1000};
  startSession(config, kSlowTimeout);
  // Every answer comes late but well within the timeout: the queue drains
  // slower than close() waits for it.
  server_->scriptEverySequence(delaySequence(kSlowTimeout * 3 / 10));
  constexpr std::size_t kRequests = 12;
  for (std::size_t i = 0; i < kRequests; ++i) submitBare(i);
  const auto t0 = std::chrono::steady_clock::now();
  const Error e = session_->close();
  EXPECT_LE(std::chrono::steady_clock::now() - t0, kSlowTimeout + kTimeoutSlack + 1s);
  EXPECT_FALSE(e) << e.message();
  ASSERT_TRUE(completions_.waitAll(kRequests, 100ms)) << "a queued request was never ended";
  std::size_t answered = 0;
  std::size_t refused = 0;
  for (std::size_t i = 0; i < kRequests; ++i) {
    const Outcome o = completions_.get(i);
    EXPECT_EQ(o.fired, 1) << "request " << i;
    if (!o.error) {
      ++answered;
    } else {
      ++refused;
      EXPECT_EQ(o.error.code, make_error_code(ClientErrc::kShutdown)) << o.error.message();
      EXPECT_EQ(o.error.context, "session closed before the request got a slot");
    }
  }
  EXPECT_GT(answered, 0U);
  EXPECT_GT(refused, 0U)
      << "the server was fast enough to drain the queue: the test proves nothing";
  EXPECT_EQ(server_->stats().destroySession, 1U);
  expectNoViolations();  // among them: no SEQUENCE after DESTROY_SESSION
}

// A queue of requests that each fail before they are sent (here: too big to
// encode) is drained one after another when the slot comes back. Each
// failure once re-entered the pump from inside the send, one stack frame
// set per queued request, which a long enough queue overflowed.
TEST_F(SessionTest, QueuedRequestsThatFailToSendEndOneByOneWithoutNesting) {
  FakeServerConfig config;
  config.grantedSlots = 1;
  startSession(config);
  constexpr auto kHold = 1s;
  server_->scriptNextSequence(delaySequence(kHold));
  const auto t0 = std::chrono::steady_clock::now();
  submitBare(0);  // holds the only slot while the rest queue behind it
  const std::string tooLong(rpc::RpcClient::kMaxCallHead + 1, 'x');
  constexpr std::size_t kQueued = 100000;
  for (std::size_t i = 1; i <= kQueued; ++i) {
    session_->submit([&tooLong](nfs4::CompoundEncoder& c) { c.lookup(tooLong); },
                     completions_.callback(i));
  }
  ASSERT_LT(std::chrono::steady_clock::now() - t0, kHold)
      << "queueing took longer than the slot was held";
  EXPECT_EQ(session_->stats().waitedForSlot, kQueued);
  ASSERT_TRUE(completions_.waitAll(kQueued + 1, kHold + kWait * 3));
  EXPECT_FALSE(completions_.get(0).error) << completions_.get(0).error.message();
  for (std::size_t i = 1; i <= kQueued; ++i) {
    const Outcome o = completions_.get(i);
    ASSERT_EQ(o.fired, 1) << "request " << i;
    ASSERT_EQ(o.error.code, make_error_code(ClientErrc::kEncodeOverflow))
        << i << ": " << o.error.message();
  }
  // The slot was given back each time: the session still works.
  EXPECT_FALSE(runBare(kQueued + 1).error);
  expectNoViolations();
}

// ------------------------------------------------------------ teardown

// The stalled-server case: calls that timed out on our side still run on the
// server, which refuses to tear down until they end (RFC 8881 18.37.3 and
// 18.50.3). close() sends each DESTROY again until the server lets go.
TEST_F(SessionTest, CloseRidesOutAServerStillBusyWithTheSessionAndClientId) {
  startSession();
  server_->failNextDestroy(Op::kDestroySession, nfs4::kErrDelay);
  server_->failNextDestroy(Op::kDestroySession, nfs4::kErrDelay);
  server_->failNextDestroy(Op::kDestroyClientId, nfs4::kErrClientIdBusy);
  server_->failNextDestroy(Op::kDestroyClientId, nfs4::kErrDelay);
  const auto t0 = std::chrono::steady_clock::now();
  const Error e = session_->close();
  EXPECT_FALSE(e) << e.message();
  // Pauses of 0.1 s then 0.2 s before each one's second and third try.
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 550ms);
  const auto s = server_->stats();
  EXPECT_EQ(s.destroySession, 3U);
  EXPECT_EQ(s.destroyClientId, 3U);
  EXPECT_EQ(session_->stats().teardownRetries, 4U);
  // DESTROY_CLIENTID only once the session is gone (it would be CLIENTID_BUSY).
  const std::vector<std::uint32_t> last = s.opLists.back();
  EXPECT_EQ(s.opLists[s.opLists.size() - 4], std::vector<std::uint32_t>{op(Op::kDestroySession)});
  EXPECT_EQ(last, std::vector<std::uint32_t>{op(Op::kDestroyClientId)});
  expectNoViolations();
}

TEST_F(SessionTest, CloseGivesUpOnAServerBusyPastTheBudgetWithItsAnswer) {
  teardownBudget_ = 300ms;
  startSession();
  for (int i = 0; i < 50; ++i)
    server_->failNextDestroy(Op::kDestroyClientId, nfs4::kErrClientIdBusy);
  const auto t0 = std::chrono::steady_clock::now();
  const Error e = session_->close();
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(e.message(), "DESTROY_CLIENTID: NFS4ERR_CLIENTID_BUSY (client id busy)");
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 2s);
  const auto s = server_->stats();
  EXPECT_EQ(s.destroySession, 1U);
  // 0.1 s, then the 0.2 s that ends at the budget: three tries in all.
  EXPECT_EQ(s.destroyClientId, 3U);
}

TEST_F(SessionTest, CloseSendsNoDestroyAgainForAnAnswerThatIsNotBusy) {
  startSession();
  server_->failNextDestroy(Op::kDestroySession, nfs4::kErrBadSession);
  const Error e = session_->close();
  EXPECT_EQ(e.message(), "DESTROY_SESSION: NFS4ERR_BADSESSION (unknown session)");
  const auto s = server_->stats();
  EXPECT_EQ(s.destroySession, 1U);
  EXPECT_EQ(s.destroyClientId, 1U);
  EXPECT_EQ(session_->stats().teardownRetries, 0U);
}

TEST_F(SessionTest, SubmitAfterCloseFailsAtOnce) {
  startSession();
  EXPECT_FALSE(session_->close());
  submitBare(0);
  ASSERT_TRUE(completions_.waitAll(1, 100ms));
  EXPECT_EQ(completions_.get(0).error.code, make_error_code(ClientErrc::kShutdown));
  EXPECT_EQ(completions_.get(0).error.context, "session closed");
}

}  // namespace
}  // namespace nfsrdma::testpeer

namespace nfsrdma::testpeer {
namespace {

// Setup used slot 0 for RECLAIM_COMPLETE (sequence 1) and the lease GETATTR
// (sequence 2): the first request after it goes on slot 0 with sequence 3.
constexpr std::uint32_t kFirstSequenceAfterSetup = 3;

// The server ran the call but its reply went down with the connection: the
// client reconnects, binds the new connection to the session and resends
// the call on the same slot with the same sequence id, which the server
// answers from its reply cache instead of running it again.
TEST_F(SessionTest, ACallWhoseReplyWasLostIsResentOnItsSlotWithItsSequenceId) {
  startSession();
  enableReconnect();
  server_->scriptNextSequence(loseReplyOnSequence());
  const Outcome o = runBare(0);
  EXPECT_FALSE(o.error) << o.error.message();
  const auto s = server_->stats();
  ASSERT_EQ(s.replays.size(), 1U);
  EXPECT_EQ(s.replays[0].first, 0U);
  EXPECT_EQ(s.replays[0].second, kFirstSequenceAfterSetup);
  EXPECT_EQ(s.bindConn, 1U);
  const auto st = session_->stats();
  EXPECT_EQ(st.reconnects, 1U);
  EXPECT_EQ(st.replayed, 1U);
  EXPECT_EQ(st.recoveries, 0U);
  EXPECT_EQ(st.outages, 1U);
  // The next request takes the sequence id after the replayed one.
  EXPECT_FALSE(runBare(1).error);
  EXPECT_EQ(server_->stats().replays.size(), 1U);
  const auto n = notices();
  ASSERT_EQ(n.size(), 1U);
  EXPECT_NE(n[0].find("reconnected and resent 1 calls in flight on their slots ("),
            std::string::npos)
      << n[0];
  expectNoViolations();
}

// A call that never reached the server (the connection went as it was
// sent) is run once on the new connection, as a new request on its slot.
TEST_F(SessionTest, CallsCutOffBeforeTheServerRanThemRunOnceAfterTheReconnect) {
  startSession();
  enableReconnect();
  server_->scriptNextSequence(hangUpOnSequence());
  const Outcome o = runBare(0);
  EXPECT_FALSE(o.error) << o.error.message();
  EXPECT_TRUE(server_->stats().replays.empty());
  EXPECT_EQ(session_->stats().replayed, 1U);
  expectNoViolations();
}

// A silent partition: the server ran the call but its reply never came,
// and the connection still looks up (no reset, no error). After the RPC
// timeout the connection is taken for dead, replaced and bound again, and
// the call goes again on its slot with its sequence id, answered from the
// reply cache, instead of failing with kTimedOut on a retired slot.
TEST_F(SessionTest, ACallUnansweredOnALiveConnectionIsReplayedOnANewOne) {
  startSession({}, kTimeout);
  enableReconnect();
  server_->scriptNextSequence(swallowReplyOnSequence());
  const auto t0 = std::chrono::steady_clock::now();
  const Outcome o = runBare(0);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, kTimeout);
  EXPECT_FALSE(o.error) << o.error.message();
  const auto s = server_->stats();
  ASSERT_EQ(s.replays.size(), 1U);
  EXPECT_EQ(s.replays[0], std::make_pair(0U, kFirstSequenceAfterSetup));
  EXPECT_EQ(s.bindConn, 1U);
  const auto st = session_->stats();
  EXPECT_EQ(st.retiredSlots, 0U);
  EXPECT_EQ(st.reconnects, 1U);
  EXPECT_EQ(st.replayed, 1U);
  EXPECT_EQ(st.outages, 1U);
  EXPECT_EQ(rpc_->stats().connectionsLost, 1U);
  EXPECT_EQ(rpc_->stats().timeouts, 1U);
  const auto n = notices();
  ASSERT_EQ(n.size(), 1U);
  EXPECT_NE(
      n[0].find("no reply from peer socketpair within 300 ms; the connection is taken for dead and "
                "replaced"),
      std::string::npos)
      << n[0];
  EXPECT_FALSE(runBare(1).error);  // the slot goes on with the next sequence id
  expectNoViolations();
}

// The request itself was lost on the way: the server never saw it, so the
// call runs once on the new connection (not from the reply cache).
TEST_F(SessionTest, ACallLostOnTheWayInASilentPartitionRunsOnceOnTheNewConnection) {
  startSession({}, kTimeout);
  enableReconnect();
  server_->scriptNextSequence(vanishSequence());
  const Outcome o = runBare(0);
  EXPECT_FALSE(o.error) << o.error.message();
  EXPECT_TRUE(server_->stats().replays.empty());
  EXPECT_EQ(session_->stats().replayed, 1U);
  EXPECT_EQ(session_->stats().retiredSlots, 0U);
  expectNoViolations();
}

// Every call in flight on the silent connection goes again, not only the
// one whose timer fired first.
TEST_F(SessionTest, EveryCallInFlightOnASilentConnectionIsReplayed) {
  startSession({}, kTimeout);
  enableReconnect();
  for (int i = 0; i < 3; ++i) server_->scriptNextSequence(swallowReplyOnSequence());
  for (std::size_t i = 0; i < 3; ++i) submitBare(i);
  ASSERT_TRUE(completions_.waitAll(3, kTimeout + kTimeoutSlack + kWait));
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_FALSE(completions_.get(i).error) << completions_.get(i).error.message();
  EXPECT_EQ(server_->stats().replays.size(), 3U);
  EXPECT_EQ(session_->stats().reconnects, 1U);
  EXPECT_EQ(session_->stats().outages, 1U);
  expectNoViolations();
}

// No connection to be had: every waiting call ends with one error naming
// the server, the time and the recovery timeout, once the timeout is spent.
TEST_F(SessionTest, AServerThatCannotBeReachedEndsEachCallWithinTheRecoveryTimeout) {
  recoveryTimeout_ = 600ms;
  startSession();
  rpc_->setReconnect([]() -> std::unique_ptr<transport::Transport> {
    throw NfsException(errnoError(ECONNREFUSED, "connect tcp 127.0.0.1:9"));
  });
  server_->scriptNextSequence(hangUpOnSequence());
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < 3; ++i) submitBare(i);
  ASSERT_TRUE(completions_.waitAll(3, kWait));
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(took, 550ms);
  EXPECT_LT(took, 600ms + 2s);
  for (std::size_t i = 0; i < 3; ++i) {
    const Outcome o = completions_.get(i);
    EXPECT_EQ(o.fired, 1);
    EXPECT_EQ(o.error.code, make_error_code(ClientErrc::kServerUnreachable)) << o.error.message();
    EXPECT_NE(o.error.message().find("recovery-timeout 600 ms"), std::string::npos)
        << o.error.message();
    EXPECT_NE(o.error.message().find("last: connect tcp 127.0.0.1:9: Connection refused"),
              std::string::npos)
        << o.error.message();
  }
  EXPECT_EQ(session_->stats().unrecovered, 1U);
}

// sa_cachethis is set on COMPOUNDs that change state, so that their replays
// are answered from the reply cache, and left off for reads.
TEST_F(SessionTest, StateChangingCompoundsAskTheServerToCacheTheirReply) {
  startSession();
  (void)runBare(0);
  session_->submit([](nfs4::CompoundEncoder& c) { c.reclaimComplete(false); },
                   completions_.callback(1));
  ASSERT_TRUE(completions_.waitAll(2));
  const auto s = server_->stats();
  ASSERT_GE(s.cacheThis.size(), 2U);
  EXPECT_FALSE(s.cacheThis[s.cacheThis.size() - 2]);
  EXPECT_TRUE(s.cacheThis.back());
}

}  // namespace
}  // namespace nfsrdma::testpeer
