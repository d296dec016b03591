// RpcClient against a scripted peer: replies matched to calls by XID in any
// order, unknown XIDs dropped and counted, every malformed or rejected reply
// turned into the right error, and every way a connection can fail (hang-up
// mid-reply, silence, an oversized fragment, our own shutdown) ending each
// call's callback exactly once, within a bounded time.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client/rpc/RpcClient.h"
#include "client/xdr/XdrDecoder.h"
#include "tests/unit/client/ScriptedPeer.h"

namespace nfsrdma::testpeer {
namespace {

using namespace std::chrono_literals;

constexpr std::uint32_t kProgram = 100003;
constexpr std::uint32_t kVersion = 4;
constexpr std::uint32_t kProcedure = 1;
constexpr auto kTimeout = 300ms;  // in the tests about timeouts
// Elsewhere a timeout must not fire even when a loaded machine stalls the
// peer thread for a while.
constexpr auto kReplyTimeout = 5s;
constexpr auto kWait = 3s;  // bound on every wait for a callback
// A call times out on the first tick after its deadline; ticks come every
// kTickIntervalMs, and a loaded test machine adds scheduling delay.
constexpr auto kTimeoutSlack =
    2 * std::chrono::milliseconds(transport::Transport::kTickIntervalMs) + 500ms;

struct Outcome {
  int fired = 0;
  Error error;
  Bytes results;  // the procedure's results as the callback saw them
  std::chrono::steady_clock::time_point at;
};

// Callbacks for numbered calls; records what each saw and how often it fired.
class Outcomes {
 public:
  rpc::ReplyCallback callback(std::size_t i) {
    return [this, i](const Error& error, xdr::XdrDecoder& results) {
      std::lock_guard lock(mu_);
      Outcome& o = outcomes_[i];
      ++o.fired;
      o.error = error;
      const auto rest = results.rest();
      o.results.assign(rest.begin(), rest.end());
      o.at = std::chrono::steady_clock::now();
      cv_.notify_all();
    };
  }
  // Waits until calls 0..n-1 have all fired.
  bool waitAll(std::size_t n, std::chrono::milliseconds timeout = kWait) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] {
      for (std::size_t i = 0; i < n; ++i) {
        auto it = outcomes_.find(i);
        if (it == outcomes_.end() || it->second.fired == 0) return false;
      }
      return true;
    });
  }
  bool wait(std::size_t i, std::chrono::milliseconds timeout = kWait) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] {
      auto it = outcomes_.find(i);
      return it != outcomes_.end() && it->second.fired > 0;
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
};

std::uint32_t indexOf(const RpcCall& call) {
  xdr::XdrDecoder dec(call.args);
  return dec.getU32();
}

// What the peer answers to call number i: its index, then a body whose size varies.
Bytes resultsFor(std::uint32_t i) {
  return concat({word(i), pattern(4 * (i % 50), i)});
}

// Polls a condition that has no notification (counters), bounded.
template <typename Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout = kWait) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

class RpcClientTest : public ::testing::Test {
 protected:
  void SetUp() override { connect(kReplyTimeout); }
  // A fresh connection and client with this call timeout.
  void connect(std::chrono::milliseconds timeout) {
    rpc_.reset();
    peer_.reset();
    Connection c = connectSocketPair();
    peer_ = std::move(c.peer);
    rpc_ = std::make_unique<rpc::RpcClient>(std::move(c.transport), kProgram, kVersion,
                                            rpc::Credential::none(), timeout);
  }

  // Starts call number i (its arguments carry i).
  Error start(std::size_t i) {
    return rpc_->call(
        kProcedure, [i](xdr::XdrEncoder& enc) { enc.putU32(static_cast<std::uint32_t>(i)); },
        outcomes_.callback(i));
  }
  // Starts calls 0..n-1 and reads them at the peer, in the order sent.
  std::vector<RpcCall> startAndRead(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      Error e = start(i);
      EXPECT_FALSE(e) << e.message();
    }
    std::vector<RpcCall> calls;
    for (std::size_t i = 0; i < n; ++i) {
      auto c = peer_->readCall();
      EXPECT_TRUE(c.has_value()) << "call " << i << " never reached the peer";
      if (!c) break;
      calls.push_back(std::move(*c));
    }
    return calls;
  }
  void expectAnswered(std::size_t i) {
    const Outcome o = outcomes_.get(i);
    EXPECT_EQ(o.fired, 1) << "call " << i;
    EXPECT_FALSE(o.error) << "call " << i << ": " << o.error.message();
    EXPECT_EQ(o.results, resultsFor(static_cast<std::uint32_t>(i)))
        << "call " << i << " got another reply";
  }

  Outcomes outcomes_;  // outlives rpc_: callbacks still fire while it is destroyed
  std::unique_ptr<ScriptedPeer> peer_;
  std::unique_ptr<rpc::RpcClient> rpc_;
};

// ------------------------------------------------------------ matching

TEST_F(RpcClientTest, SixtyFourCallsAnsweredInReverseOrder) {
  const auto calls = startAndRead(64);
  ASSERT_EQ(calls.size(), 64U);
  std::set<std::uint32_t> xids;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].program, kProgram);
    EXPECT_EQ(calls[i].version, kVersion);
    EXPECT_EQ(calls[i].procedure, kProcedure);
    EXPECT_EQ(indexOf(calls[i]), i);
    xids.insert(calls[i].xid);
  }
  EXPECT_EQ(xids.size(), 64U) << "XIDs must be unique among calls in flight";
  for (std::size_t i = calls.size(); i-- > 0;) {
    ASSERT_TRUE(peer_->sendRecord(successReply(calls[i].xid, resultsFor(indexOf(calls[i])))));
  }
  ASSERT_TRUE(outcomes_.waitAll(64));
  for (std::size_t i = 0; i < 64; ++i) expectAnswered(i);
  const auto s = rpc_->stats();
  EXPECT_EQ(s.calls, 64U);
  EXPECT_EQ(s.replies, 64U);
  EXPECT_EQ(s.unknownXids, 0U);
  EXPECT_EQ(s.malformedReplies, 0U);
}

TEST_F(RpcClientTest, SixtyFourCallsAnsweredInRandomOrderAndFraming) {
  auto calls = startAndRead(64);
  ASSERT_EQ(calls.size(), 64U);
  std::mt19937 rng(20261129);
  std::shuffle(calls.begin(), calls.end(), rng);
  // Replies in batches of random size, some split into fragments.
  std::size_t i = 0;
  while (i < calls.size()) {
    const std::size_t batch = std::min<std::size_t>(1 + rng() % 9, calls.size() - i);
    Bytes wire;
    for (std::size_t k = 0; k < batch; ++k, ++i) {
      const Bytes reply = successReply(calls[i].xid, resultsFor(indexOf(calls[i])));
      const std::size_t first = rng() % reply.size();
      const std::size_t sizes[] = {first, reply.size() - first};
      const Bytes framed = (rng() % 2 == 0) ? frame(reply) : frameFragments(reply, sizes);
      wire.insert(wire.end(), framed.begin(), framed.end());
    }
    ASSERT_TRUE(peer_->send(wire));
  }
  ASSERT_TRUE(outcomes_.waitAll(64));
  for (std::size_t k = 0; k < 64; ++k) expectAnswered(k);
}

TEST_F(RpcClientTest, UnknownXidIsDroppedAndCountedWhileTheRealReplyCompletes) {
  const auto calls = startAndRead(1);
  ASSERT_EQ(calls.size(), 1U);
  ASSERT_TRUE(peer_->sendRecord(successReply(calls[0].xid ^ 0x5a5a5a5aU, resultsFor(999))));
  ASSERT_TRUE(peer_->sendRecord(successReply(calls[0].xid, resultsFor(0))));
  ASSERT_TRUE(outcomes_.waitAll(1));
  expectAnswered(0);
  const auto s = rpc_->stats();
  EXPECT_EQ(s.unknownXids, 1U);
  EXPECT_EQ(s.replies, 1U);
}

TEST_F(RpcClientTest, DuplicateReplyIsCountedAsUnknown) {
  const auto calls = startAndRead(1);
  ASSERT_EQ(calls.size(), 1U);
  const Bytes reply = successReply(calls[0].xid, resultsFor(0));
  ASSERT_TRUE(peer_->send(concat({frame(reply), frame(reply)})));
  ASSERT_TRUE(outcomes_.waitAll(1));
  ASSERT_TRUE(eventually([&] { return rpc_->stats().unknownXids == 1; }));
  expectAnswered(0);  // fired once, not twice
}

TEST_F(RpcClientTest, SomeAnsweredSomeTimedOut) {
  connect(kTimeout);
  const auto calls = startAndRead(10);
  ASSERT_EQ(calls.size(), 10U);
  for (const auto& c : calls) {
    if (indexOf(c) % 2 == 0) {
      ASSERT_TRUE(peer_->sendRecord(successReply(c.xid, resultsFor(indexOf(c)))));
    }
  }
  ASSERT_TRUE(outcomes_.waitAll(10, kTimeout + kTimeoutSlack + kWait));
  for (std::size_t i = 0; i < 10; ++i) {
    if (i % 2 == 0) {
      expectAnswered(i);
    } else {
      const Outcome o = outcomes_.get(i);
      EXPECT_EQ(o.fired, 1);
      EXPECT_EQ(o.error.code, make_error_code(ClientErrc::kTimedOut)) << o.error.message();
    }
  }
  EXPECT_EQ(rpc_->stats().timeouts, 5U);
}

TEST_F(RpcClientTest, CallbacksStartingCallsKeepAQueueDepth) {
  // The peer answers every call at once; each callback starts the next call
  // from the transport's I/O thread (corked sends), 8 chains of 50.
  peer_->serve([](ScriptedPeer& p, const RpcCall& c) {
    (void)p.sendRecord(successReply(c.xid, resultsFor(indexOf(c))));
  });
  constexpr std::size_t kDepth = 8;
  constexpr std::size_t kTotal = 400;
  std::mutex mu;
  std::condition_variable cv;
  std::size_t done = 0;
  std::size_t wrong = 0;
  std::function<void(std::size_t)> startChain = [&](std::size_t i) {
    Error e = rpc_->call(
        kProcedure, [i](xdr::XdrEncoder& enc) { enc.putU32(static_cast<std::uint32_t>(i)); },
        [&, i](const Error& err, xdr::XdrDecoder& results) {
          const auto rest = results.rest();
          const bool right =
              !err && Bytes(rest.begin(), rest.end()) == resultsFor(static_cast<std::uint32_t>(i));
          {
            std::lock_guard lock(mu);
            ++done;
            if (!right) ++wrong;
          }
          cv.notify_all();
          if (!err && i + kDepth < kTotal) startChain(i + kDepth);
        });
    if (e) {
      std::lock_guard lock(mu);
      ++wrong;
      done = kTotal;  // stop waiting
      cv.notify_all();
    }
  };
  // Callbacks use the locals above: end the client before they go away.
  struct ShutdownFirst {
    std::unique_ptr<rpc::RpcClient>& rpc;
    ~ShutdownFirst() { rpc.reset(); }
  } shutdownFirst{rpc_};
  for (std::size_t i = 0; i < kDepth; ++i) startChain(i);
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, kWait, [&] { return done >= kTotal; })) << done << " of " << kTotal;
  EXPECT_EQ(wrong, 0U);
}

// ------------------------------------------------------------ malformed and rejected replies

struct BadReply {
  const char* name;
  Bytes (*build)(std::uint32_t xid);
  ClientErrc code;
  const char* context;
  bool malformed;  // counted in stats().malformedReplies
};

Bytes words(std::initializer_list<std::uint32_t> ws) {
  Bytes out;
  for (auto w : ws) {
    const Bytes b = word(w);
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}

const BadReply kBadReplies[] = {
    {"OnlyTheXid", [](std::uint32_t x) { return words({x}); }, ClientErrc::kMalformedReply,
     "RPC reply: shorter than an RPC header", true},
    {"TruncatedAfterMessageType",
     [](std::uint32_t x) {
       return words({x, 1});
     },
     ClientErrc::kMalformedReply, "RPC reply: truncated accepted reply", true},
    {"CallInsteadOfReply",
     [](std::uint32_t x) {
       return words({x, 0, 2, kProgram, kVersion, 1});
     },
     ClientErrc::kMalformedReply, "RPC reply: message type 0, expected REPLY (1)", true},
    {"UnknownMessageType",
     [](std::uint32_t x) {
       return words({x, 0xdeadbeefU, 0});
     },
     ClientErrc::kMalformedReply, "RPC reply: message type 3735928559, expected REPLY (1)", true},
    {"UnknownReplyStat",
     [](std::uint32_t x) {
       return words({x, 1, 7});
     },
     ClientErrc::kMalformedReply, "RPC reply: reply_stat 7", true},
    {"DeniedAuthBadCred", [](std::uint32_t x) { return authErrorReply(x, 1); },
     ClientErrc::kRpcDenied, "RPC AUTH_ERROR AUTH_BADCRED", false},
    {"DeniedAuthTooWeak", [](std::uint32_t x) { return authErrorReply(x, 5); },
     ClientErrc::kRpcDenied, "RPC AUTH_ERROR AUTH_TOOWEAK", false},
    {"DeniedUnknownAuthStat", [](std::uint32_t x) { return authErrorReply(x, 99); },
     ClientErrc::kRpcDenied, "RPC AUTH_ERROR AUTH_(unknown)", false},
    {"DeniedRpcMismatch", [](std::uint32_t x) { return rpcMismatchReply(x, 3, 3); },
     ClientErrc::kRpcDenied, "RPC_MISMATCH (server speaks RPC 3-3)", false},
    {"DeniedUnknownRejectStat",
     [](std::uint32_t x) {
       return words({x, 1, 1, 9});
     },
     ClientErrc::kMalformedReply, "RPC reply: reject_stat 9", true},
    {"DeniedTruncatedAuthError",
     [](std::uint32_t x) {
       return words({x, 1, 1, 1});
     },
     ClientErrc::kMalformedReply, "RPC reply: truncated AUTH_ERROR", true},
    {"DeniedTruncatedRpcMismatch",
     [](std::uint32_t x) {
       return words({x, 1, 1, 0, 2});
     },
     ClientErrc::kMalformedReply, "RPC reply: truncated RPC_MISMATCH", true},
    {"ProgUnavail",
     [](std::uint32_t x) { return acceptErrorReply(x, rpc::AcceptStat::kProgUnavail); },
     ClientErrc::kRpcAcceptError, "RPC PROG_UNAVAIL (program not served)", false},
    {"ProgMismatch",
     [](std::uint32_t x) { return acceptErrorReply(x, rpc::AcceptStat::kProgMismatch, 2, 3); },
     ClientErrc::kRpcAcceptError, "RPC PROG_MISMATCH (server has versions 2-3)", false},
    {"TruncatedProgMismatch",
     [](std::uint32_t x) {
       return words({x, 1, 0, 0, 0, 2, 4});
     },
     ClientErrc::kMalformedReply, "RPC reply: truncated PROG_MISMATCH", true},
    {"ProcUnavail",
     [](std::uint32_t x) { return acceptErrorReply(x, rpc::AcceptStat::kProcUnavail); },
     ClientErrc::kRpcAcceptError, "RPC PROC_UNAVAIL", false},
    {"GarbageArgs",
     [](std::uint32_t x) { return acceptErrorReply(x, rpc::AcceptStat::kGarbageArgs); },
     ClientErrc::kRpcAcceptError, "RPC GARBAGE_ARGS (server could not decode the call)", false},
    {"SystemErr", [](std::uint32_t x) { return acceptErrorReply(x, rpc::AcceptStat::kSystemErr); },
     ClientErrc::kRpcAcceptError, "RPC SYSTEM_ERR", false},
    {"UnknownAcceptStat",
     [](std::uint32_t x) {
       return words({x, 1, 0, 0, 0, 6});
     },
     ClientErrc::kMalformedReply, "RPC reply: accept_stat 6", true},
    {"VerifierLengthNearFourGiB",
     [](std::uint32_t x) {
       return words({x, 1, 0, 0, 0xfffffff0U, 0});
     },
     ClientErrc::kMalformedReply, "RPC reply: truncated accepted reply", true},
    {"VerifierLongerThanTheMessage",
     [](std::uint32_t x) {
       return words({x, 1, 0, 0, 200, 0, 0});
     },
     ClientErrc::kMalformedReply, "RPC reply: truncated accepted reply", true},
    {"VerifierOverFourHundredBytes",
     [](std::uint32_t x) {
       return concat({words({x, 1, 0, 1, 404}), Bytes(404, 0xab), words({0})});
     },
     ClientErrc::kMalformedReply, "RPC reply: truncated accepted reply", true},
    {"NoAcceptStat",
     [](std::uint32_t x) {
       return words({x, 1, 0, 0, 0});
     },
     ClientErrc::kMalformedReply, "RPC reply: truncated accepted reply", true},
};

class RpcBadReplyTest : public RpcClientTest, public ::testing::WithParamInterface<BadReply> {};

TEST_P(RpcBadReplyTest, GivesTheRightErrorAndTheConnectionStaysUsable) {
  const BadReply& bad = GetParam();
  const auto calls = startAndRead(1);
  ASSERT_EQ(calls.size(), 1U);
  ASSERT_TRUE(peer_->sendRecord(bad.build(calls[0].xid)));
  ASSERT_TRUE(outcomes_.waitAll(1));
  const Outcome o = outcomes_.get(0);
  EXPECT_EQ(o.fired, 1);
  EXPECT_EQ(o.error.code, make_error_code(bad.code)) << o.error.message();
  EXPECT_EQ(o.error.context, bad.context);
  EXPECT_EQ(rpc_->stats().malformedReplies, bad.malformed ? 1U : 0U);
  // A bad reply fails its own call only: the next call on the connection works.
  ASSERT_FALSE(start(1));
  auto next = peer_->readCall();
  ASSERT_TRUE(next.has_value());
  ASSERT_TRUE(peer_->sendRecord(successReply(next->xid, resultsFor(1))));
  ASSERT_TRUE(outcomes_.wait(1));
  expectAnswered(1);
}

INSTANTIATE_TEST_SUITE_P(Replies, RpcBadReplyTest, ::testing::ValuesIn(kBadReplies),
                         [](const ::testing::TestParamInfo<BadReply>& p) { return p.param.name; });

TEST_F(RpcClientTest, RecordsTooShortForAnXidAreDroppedAndCounted) {
  const auto calls = startAndRead(1);
  ASSERT_EQ(calls.size(), 1U);
  ASSERT_TRUE(peer_->send(concat({frame(Bytes{}), frame(Bytes{1, 2, 3})})));
  ASSERT_TRUE(eventually([&] { return rpc_->stats().malformedReplies == 2; }));
  EXPECT_EQ(outcomes_.get(0).fired, 0) << "a record without an XID must not complete any call";
  ASSERT_TRUE(peer_->sendRecord(successReply(calls[0].xid, resultsFor(0))));
  ASSERT_TRUE(outcomes_.waitAll(1));
  expectAnswered(0);
}

// ------------------------------------------------------------ connection failures

TEST_F(RpcClientTest, PeerClosingInTheMiddleOfAReplyFailsEveryCall) {
  const auto calls = startAndRead(3);
  ASSERT_EQ(calls.size(), 3U);
  ASSERT_TRUE(peer_->sendRecord(successReply(calls[0].xid, resultsFor(0))));
  const Bytes half = frame(successReply(calls[1].xid, resultsFor(1)));
  ASSERT_TRUE(peer_->send(std::span<const std::uint8_t>(half.data(), half.size() / 2)));
  ASSERT_TRUE(outcomes_.wait(0));
  ASSERT_TRUE(peer_->waitConsumed());
  peer_->hangUp();
  ASSERT_TRUE(outcomes_.waitAll(3));
  expectAnswered(0);
  for (std::size_t i : {std::size_t{1}, std::size_t{2}}) {
    const Outcome o = outcomes_.get(i);
    EXPECT_EQ(o.fired, 1);
    EXPECT_EQ(o.error.code, make_error_code(ClientErrc::kConnectionLost)) << o.error.message();
    EXPECT_NE(o.error.context.find("closed in the middle of a reply"), std::string::npos)
        << o.error.message();
  }
  // Later calls fail at once, and their callbacks never run.
  const auto t0 = std::chrono::steady_clock::now();
  const Error e = start(3);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 100ms);
  EXPECT_EQ(e.code, make_error_code(ClientErrc::kConnectionLost)) << e.message();
  rpc_.reset();
  EXPECT_EQ(outcomes_.get(3).fired, 0);
}

TEST_F(RpcClientTest, PeerClosingBetweenRepliesFailsTheCallsInFlight) {
  const auto calls = startAndRead(2);
  ASSERT_EQ(calls.size(), 2U);
  peer_->hangUp();
  ASSERT_TRUE(outcomes_.waitAll(2));
  for (std::size_t i : {std::size_t{0}, std::size_t{1}}) {
    const Outcome o = outcomes_.get(i);
    EXPECT_EQ(o.fired, 1);
    EXPECT_EQ(o.error.message(),
              "peer socketpair: connection closed by the server: connection to the server lost");
  }
  EXPECT_EQ(start(2).code, make_error_code(ClientErrc::kConnectionLost));
}

TEST_F(RpcClientTest, PeerThatNeverAnswersTimesOutWithinTheConfiguredTimeout) {
  connect(kTimeout);
  const auto t0 = std::chrono::steady_clock::now();
  const auto calls = startAndRead(1);
  ASSERT_EQ(calls.size(), 1U);
  ASSERT_TRUE(outcomes_.waitAll(1, kTimeout + kTimeoutSlack + kWait));
  const Outcome o = outcomes_.get(0);
  EXPECT_EQ(o.fired, 1);
  EXPECT_EQ(o.error.code, make_error_code(ClientErrc::kTimedOut));
  EXPECT_EQ(o.error.context, "no reply from peer socketpair within 300 ms");
  EXPECT_GE(o.at - t0, kTimeout);
  EXPECT_LE(o.at - t0, kTimeout + kTimeoutSlack);
  EXPECT_EQ(rpc_->stats().timeouts, 1U);
  // The late reply is a reply to an unknown XID now.
  ASSERT_TRUE(peer_->sendRecord(successReply(calls[0].xid, resultsFor(0))));
  ASSERT_TRUE(eventually([&] { return rpc_->stats().unknownXids == 1; }));
  EXPECT_EQ(outcomes_.get(0).fired, 1);
  // A timeout does not break the connection.
  ASSERT_FALSE(start(1));
  auto next = peer_->readCall();
  ASSERT_TRUE(next.has_value());
  ASSERT_TRUE(peer_->sendRecord(successReply(next->xid, resultsFor(1))));
  ASSERT_TRUE(outcomes_.wait(1));
  expectAnswered(1);
}

// A connection taken for dead (the session's answer to a call unanswered
// past the timeout): every call in flight ends with kConnectionLost naming
// why, the old connection is closed at once (the peer reads end of stream,
// so no late reply can land), later calls fail until reconnect(), and the
// new connection carries calls again.
TEST_F(RpcClientTest, AConnectionPresumedDeadEndsItsCallsAndIsClosedUntilReplaced) {
  std::unique_ptr<ScriptedPeer> second;
  rpc_->setReconnect([&second] {
    Connection c = connectSocketPair();
    second = std::move(c.peer);
    return std::unique_ptr<transport::Transport>(std::move(c.transport));
  });
  const auto calls = startAndRead(3);
  ASSERT_EQ(calls.size(), 3U);
  rpc_->presumeDead("no reply within 300 ms");
  ASSERT_TRUE(outcomes_.waitAll(3));
  for (std::size_t i = 0; i < 3; ++i) {
    const Outcome o = outcomes_.get(i);
    EXPECT_EQ(o.fired, 1);
    EXPECT_EQ(o.error.code, make_error_code(ClientErrc::kConnectionLost));
    EXPECT_EQ(o.error.context, "no reply within 300 ms");
  }
  EXPECT_TRUE(rpc_->connectionLost());
  EXPECT_EQ(rpc_->stats().connectionsLost, 1U);
  EXPECT_FALSE(peer_->readRecord(kWait).has_value()) << "the old connection is still open";
  EXPECT_EQ(start(3).code, make_error_code(ClientErrc::kConnectionLost));
  rpc_->presumeDead("again");  // already failed: counted once
  EXPECT_EQ(rpc_->stats().connectionsLost, 1U);
  ASSERT_FALSE(rpc_->reconnect());
  ASSERT_FALSE(start(4));
  auto next = second->readCall();
  ASSERT_TRUE(next.has_value());
  ASSERT_TRUE(second->sendRecord(successReply(next->xid, resultsFor(4))));
  ASSERT_TRUE(outcomes_.wait(4));
  EXPECT_FALSE(outcomes_.get(4).error);
}

// Without a way to replace it, a connection is never taken for dead: its
// calls go on and time out one by one, as before.
TEST_F(RpcClientTest, AConnectionThatCannotBeReplacedIsNotPresumedDead) {
  const auto calls = startAndRead(1);
  ASSERT_EQ(calls.size(), 1U);
  rpc_->presumeDead("no reply within 300 ms");
  EXPECT_FALSE(rpc_->connectionLost());
  EXPECT_FALSE(outcomes_.wait(0, 200ms));
  ASSERT_TRUE(peer_->sendRecord(successReply(calls[0].xid, resultsFor(0))));
  ASSERT_TRUE(outcomes_.wait(0));
  EXPECT_FALSE(outcomes_.get(0).error);
}

TEST_F(RpcClientTest, ManySilentCallsAllTimeOut) {
  connect(kTimeout);
  const auto t0 = std::chrono::steady_clock::now();
  const auto calls = startAndRead(32);
  ASSERT_EQ(calls.size(), 32U);
  ASSERT_TRUE(outcomes_.waitAll(32, kTimeout + kTimeoutSlack + kWait));
  for (std::size_t i = 0; i < 32; ++i) {
    const Outcome o = outcomes_.get(i);
    EXPECT_EQ(o.fired, 1);
    EXPECT_EQ(o.error.code, make_error_code(ClientErrc::kTimedOut));
    EXPECT_LE(o.at - t0, kTimeout + kTimeoutSlack);
  }
}

TEST_F(RpcClientTest, FragmentBeyondTheMaximumFailsEveryPendingCall) {
  rpc_->setMaxIncomingMessage(1024);
  const auto calls = startAndRead(5);
  ASSERT_EQ(calls.size(), 5U);
  ASSERT_TRUE(peer_->send(concat({recordMarker(2000, true), pattern(64, 1)})));
  ASSERT_TRUE(outcomes_.waitAll(5));
  for (std::size_t i = 0; i < 5; ++i) {
    const Outcome o = outcomes_.get(i);
    EXPECT_EQ(o.fired, 1);
    EXPECT_EQ(o.error.code, make_error_code(ClientErrc::kRecordTooLarge)) << o.error.message();
    EXPECT_EQ(
        o.error.context,
        "peer socketpair: record fragment of 2000 bytes exceeds the negotiated maximum of 1024");
  }
  const Error e = start(5);
  EXPECT_EQ(e.code, make_error_code(ClientErrc::kRecordTooLarge)) << e.message();
}

TEST_F(RpcClientTest, DestroyedWithCallsInFlightFailsEachOnceWithShutdown) {
  const auto calls = startAndRead(16);
  ASSERT_EQ(calls.size(), 16U);
  rpc_.reset();
  for (std::size_t i = 0; i < 16; ++i) {
    const Outcome o = outcomes_.get(i);
    EXPECT_EQ(o.fired, 1) << "call " << i;
    EXPECT_EQ(o.error.code, make_error_code(ClientErrc::kShutdown));
    EXPECT_EQ(o.error.message(), "rpc on peer socketpair: client is shutting down");
  }
}

TEST_F(RpcClientTest, CallsAfterShutdownFailAtOnceWithoutCallback) {
  rpc_->shutdown();
  const Error e = start(0);
  EXPECT_EQ(e.code, make_error_code(ClientErrc::kShutdown));
  rpc_.reset();
  EXPECT_EQ(outcomes_.get(0).fired, 0);
}

TEST_F(RpcClientTest, OversizedCallIsRefusedWithoutCallback) {
  const Error e = rpc_->call(
      kProcedure,
      [](xdr::XdrEncoder& enc) {
        const Bytes big(rpc::RpcClient::kMaxCallHead, 0x11);
        enc.putOpaque(big);
      },
      outcomes_.callback(0));
  EXPECT_EQ(e.code, make_error_code(ClientErrc::kEncodeOverflow));
  EXPECT_EQ(e.context, "encode RPC call (procedure 1)");
  EXPECT_EQ(rpc_->stats().calls, 0U);
  // Nothing reached the wire; the next call does.
  const auto calls = startAndRead(2);
  ASSERT_EQ(calls.size(), 2U);
  EXPECT_EQ(indexOf(calls[0]), 0U);
  rpc_.reset();
  EXPECT_EQ(outcomes_.get(0).fired, 1);  // the second call numbered 0, failed by shutdown
}

// A call racing a connection failure: call() either returns an error (and
// the callback never runs) or returns success (and the callback runs once).
// Never both: Session::issue() would release the slot twice.
TEST(RpcClientRaceTest, CallRacingAConnectionFailureIsReportedExactlyOnce) {
  std::size_t doubles = 0;
  std::size_t rounds = 0;
  const auto until = std::chrono::steady_clock::now() + 1500ms;
  while (std::chrono::steady_clock::now() < until && doubles == 0) {
    ++rounds;
    Outcomes outcomes;
    Connection c = connectSocketPair();
    auto rpc = std::make_unique<rpc::RpcClient>(std::move(c.transport), kProgram, kVersion,
                                                rpc::Credential::none(), kReplyTimeout);
    std::vector<char> returnedError(4096, 0);
    std::atomic<std::size_t> started{0};
    std::atomic<bool> callerDone{false};
    std::thread caller([&] {
      for (std::size_t i = 0; i < returnedError.size(); ++i) {
        started.store(i + 1);
        Error e = rpc->call(
            kProcedure, [i](xdr::XdrEncoder& enc) { enc.putU32(static_cast<std::uint32_t>(i)); },
            outcomes.callback(i));
        if (e) {
          returnedError[i] = 1;
          break;
        }
      }
      callerDone.store(true);
    });
    while (started.load() < 8 && !callerDone.load()) std::this_thread::yield();
    c.peer->hangUp();
    caller.join();
    rpc.reset();  // whatever is still pending fires now (kShutdown)
    for (std::size_t i = 0; i < started.load(); ++i) {
      const int fired = outcomes.get(i).fired;
      if (fired + returnedError[i] != 1) {
        ++doubles;
        ADD_FAILURE() << "round " << rounds << ", call " << i << ": callback fired " << fired
                      << " time(s) and call() returned "
                      << (returnedError[i] ? "an error" : "success");
      }
    }
  }
  RecordProperty("rounds", static_cast<int>(rounds));
}

}  // namespace
}  // namespace nfsrdma::testpeer
