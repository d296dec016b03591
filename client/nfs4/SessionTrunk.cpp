// The connections of a trunked session (nconnect; RFC 8881 2.10.5): which
// one a call goes on, how each joins the session, and how one that failed
// comes back while the others carry the load. Session.h says the rules.
#include <algorithm>

#include "client/nfs4/BusyRetry.h"
#include "client/nfs4/Session.h"

namespace nfsrdma::nfs4 {
std::vector<std::unique_ptr<Session::Connection>> Session::makeConnections(
    const std::vector<SessionConnection>& connections) {
  std::vector<std::unique_ptr<Connection>> out;
  for (const auto& given : connections) {
    auto c = std::make_unique<Connection>();
    c->rpc = given.rpc;
    c->otherAddress = given.otherAddress;
    c->corksRounds = given.rpc->corksRounds();
    // Only the first is bound by CREATE_SESSION; the others join it first.
    c->state = out.empty() ? ConnState::kUp : ConnState::kUnbound;
    out.push_back(std::move(c));
  }
  return out;
}

namespace {
// The connection the calls of one loop round go on (pickForRound).
struct RoundTarget {
  const void* session = nullptr;
  std::uint64_t round = 0;
  std::size_t conn = 0;
};
thread_local RoundTarget tlsRoundTarget;
}  // namespace

std::size_t Session::pick() const {
  const std::size_t n = conns_.size();
  if (n == 1) return 0;
  if (const rpc::RpcClient* current = rpc::RpcClient::deliveringNow()) {
    if (conns_.front()->corksRounds) return pickForRound();
    // A call made from a reply callback stays on that reply's connection
    // unless it is clearly busier than the least loaded: sent while its
    // replies are delivered, it is corked with the others of the wakeup,
    // where another connection would send it on its own.
    std::size_t mine = n;
    std::size_t least = SIZE_MAX;
    for (std::size_t i = 0; i < n; ++i) {
      if (conns_[i]->state.load(std::memory_order_relaxed) != ConnState::kUp) continue;
      if (conns_[i]->rpc == current) mine = i;
      least = std::min(least, conns_[i]->rpc->inFlight());
    }
    if (mine != n && conns_[mine]->rpc->inFlight() <= least + kAffinitySlack) return mine;
  }
  return leastLoaded(false);
}

std::size_t Session::leastLoaded(bool thisThreadOnly) const {
  // Ties go round, so a caller with one call at a time still uses every
  // connection. None up: the first, whose call then fails and starts the
  // recovery.
  const std::size_t n = conns_.size();
  const std::size_t start = rotor_.fetch_add(1, std::memory_order_relaxed);
  std::size_t best = thisThreadOnly ? n : 0;
  std::size_t load = SIZE_MAX;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = (start + k) % n;
    if (conns_[i]->state.load(std::memory_order_relaxed) != ConnState::kUp) continue;
    if (thisThreadOnly && !conns_[i]->rpc->onIoThread()) continue;
    const std::size_t l = conns_[i]->rpc->inFlight();
    if (l < load) {
      best = i;
      load = l;
    }
  }
  return best;
}

std::size_t Session::pickForRound() const {
  // The calls that reply callbacks make in one round of the loop all go on
  // one of the loop's connections, the least loaded when the round's first
  // call is made. They leave in one send at the round's end and their
  // replies come back together, where spreading every round's calls over
  // all connections costs each connection a send and a receive per round
  // (on loopback also the server's side of every segment). The rounds take
  // turns, so every connection carries its part of the load.
  const std::size_t n = conns_.size();
  const std::uint64_t round = rpc::RpcClient::deliveryRound();
  RoundTarget& t = tlsRoundTarget;
  if (t.session == this && t.round == round && t.conn < n && connectionUp(t.conn)) return t.conn;
  std::size_t target = leastLoaded(true);
  if (target == n) target = leastLoaded(false);  // none of them served by this thread
  t = RoundTarget{this, round, target};
  return target;
}

bool Session::connectionUp(std::size_t i) const {
  return i < conns_.size() && conns_[i]->state.load(std::memory_order_relaxed) == ConnState::kUp;
}

bool Session::anyUpLocked() const {
  return std::any_of(conns_.begin(), conns_.end(),
                     [](const auto& c) { return c->state.load() == ConnState::kUp; });
}

void Session::markDownLocked(std::size_t i, const Error& cause) {
  Connection& c = *conns_[i];
  if (c.state == ConnState::kDown) return;
  if (c.state == ConnState::kUp && conns_.size() > 1) ++stats_.connectionLosses;
  c.state = ConnState::kDown;
  c.lostBy = cause;
  c.downSince = std::chrono::steady_clock::now();
  c.nextAttempt = c.downSince;
  c.pause = std::chrono::milliseconds(0);
  renewWake_.notify_all();
}

void Session::unbindOthersLocked() {
  conns_.front()->state = ConnState::kUp;  // CREATE_SESSION went on it
  for (std::size_t i = 1; i < conns_.size(); ++i) {
    Connection& c = *conns_[i];
    if (c.state != ConnState::kDown) c.state = ConnState::kUnbound;
    c.nextAttempt = std::chrono::steady_clock::now();
    c.pause = std::chrono::milliseconds(0);
  }
}

void Session::keepForReplayLocked(Replay replay, const Error& cause) {
  markDownLocked(replay.request->conn, cause);
  if (!recovering_ && anyUpLocked()) {
    // Another connection is bound to the session: the call goes again there
    // on its own slot and sequence id (the reply cache is the session's,
    // not the connection's), after the short pause a replay the server may
    // still be running gets anyway.
    replay.request->replaying = true;
    ++stats_.failovers;
    ++stats_.replayed;
    delayedReplays_.push_back(std::move(replay));
    renewWake_.notify_all();
    return;
  }
  replays_.push_back(std::move(replay));
  startRecoveryLocked(cause, true);
  if (slots_.inUse() == replays_.size()) idle_.notify_all();
}

Error Session::joinTrunk() {
  for (std::size_t i = 1; i < conns_.size(); ++i) {
    Connection& c = *conns_[i];
    if (Error e = rejoin(c, false)) {
      return makeError(e.code, "connection " + std::to_string(i + 1) + " of " +
                                   std::to_string(conns_.size()) + " (" + c.rpc->describe() +
                                   "): " + e.context);
    }
    c.state = ConnState::kUp;
  }
  return {};
}

Error Session::rejoin(Connection& c, bool reconnect) {
  if (reconnect) {
    if (Error e = c.rpc->reconnect()) return e;
  }
  if (c.otherAddress) {
    if (Error e = sameServer(*c.rpc)) return e;
  }
  return bindConnection(*c.rpc);
}

Error Session::sameServer(rpc::RpcClient& rpc) {
  // The same owner and verifier as the first EXCHANGE_ID: the same server
  // answers with our client ID and changes nothing (RFC 8881 18.35.5).
  ExchangeIdResult there;
  std::span<const std::uint8_t> owner(
      reinterpret_cast<const std::uint8_t*>(options_.ownerId.data()), options_.ownerId.size());
  Error e = sessionlessRoundTrip(
      rpc, [&](CompoundEncoder& c) { c.exchangeId(verifier_, owner, kExchgIdFlagUseNonPnfs); },
      [&](CompoundDecoder& d) -> Error {
        const std::uint32_t st = d.next(Op::kExchangeId);
        if (!d.ok())
          return makeError(ClientErrc::kMalformedReply, "EXCHANGE_ID: " + d.malformedReason());
        if (st != kNfs4Ok) return makeError(statusError(st), "EXCHANGE_ID for trunking");
        there = d.exchangeId();
        return d.ok()
                   ? Error{}
                   : makeError(ClientErrc::kMalformedReply, "EXCHANGE_ID: " + d.malformedReason());
      });
  if (e) return e;
  std::string differs;
  if (there.serverOwnerMajor != server_.serverOwnerMajor) {
    differs = "server owner '" + there.serverOwnerMajor + "', the first address's '" +
              server_.serverOwnerMajor + "'";
  } else if (there.serverScope != server_.serverScope) {
    differs = "server scope '" + there.serverScope + "', the first address's '" +
              server_.serverScope + "'";
  } else if (there.serverOwnerMinor != server_.serverOwnerMinor) {
    differs = "server owner minor id " + std::to_string(there.serverOwnerMinor) +
              ", the first address's " + std::to_string(server_.serverOwnerMinor) +
              " (the same server, but sessions do not span them)";
  } else if (there.clientId != clientId()) {
    differs = "client ID " + std::to_string(there.clientId) + " for our owner, not " +
              std::to_string(clientId());
  }
  if (differs.empty()) return {};
  return makeError(ClientErrc::kNotSameServer,
                   "EXCHANGE_ID on " + rpc.describe() + " answered with " + differs);
}

std::chrono::steady_clock::duration Session::untilConnectionDueLocked() const {
  auto until = std::chrono::steady_clock::duration::max();
  if (conns_.size() == 1 || recovering_ || !canRecover_)
    return until;  // a single one: recover() has it
  const auto now = std::chrono::steady_clock::now();
  for (const auto& c : conns_) {
    const ConnState st = c->state.load();
    if (st != ConnState::kDown && st != ConnState::kUnbound) continue;
    until = std::min(until, c->nextAttempt > now ? c->nextAttempt - now
                                                 : std::chrono::steady_clock::duration::zero());
  }
  return until;
}

void Session::restoreConnections(std::unique_lock<std::mutex>& lock) {
  for (std::size_t i = 0; i < conns_.size() && !recovering_ && !stopRenew_; ++i) {
    Connection& c = *conns_[i];
    const ConnState st = c.state.load();
    if ((st != ConnState::kDown && st != ConnState::kUnbound) ||
        c.nextAttempt > std::chrono::steady_clock::now()) {
      continue;
    }
    const bool reconnect = st == ConnState::kDown || c.rpc->connectionLost();
    lock.unlock();
    // Unanswered: the connection is taken for dead, and made again next time.
    const Error e = presumeDeadAfterTimeout(*c.rpc, rejoin(c, reconnect));
    lock.lock();
    if (!e) {
      c.state = ConnState::kUp;
      if (reconnect) ++stats_.reconnects;
      if (st == ConnState::kDown && options_.onRecovered) {
        const std::string notice = "connection " + std::to_string(i + 1) + " of " +
                                   std::to_string(conns_.size()) + " (" + c.rpc->describe() +
                                   "): " + c.lostBy.message() +
                                   "; reconnected and bound to the session again after " +
                                   seconds(std::chrono::steady_clock::now() - c.downSince);
        lock.unlock();
        options_.onRecovered(notice);
        lock.lock();
      }
      continue;
    }
    if (sessionGone(e)) {
      startRecoveryLocked(e, false);
      return;
    }
    // The server will not take this connection (ganesha records at most 16
    // per session; another server behind a trunk address): the others carry
    // on without it until a new session. A failed connect is tried again.
    const bool refused = e.code == make_error_code(ClientErrc::kNotSameServer) ||
                         (e.code.category() == nfs4Category() && !BusyRetry::busy(e));
    c.lostBy = e;
    if (refused) {
      c.state = ConnState::kRefused;
      continue;
    }
    c.state = c.rpc->connectionLost() ? ConnState::kDown : ConnState::kUnbound;
    c.pause = std::clamp(c.pause * 2, std::chrono::milliseconds(100), options_.maxReconnectPause);
    c.nextAttempt = std::chrono::steady_clock::now() + c.pause;
  }
}

}  // namespace nfsrdma::nfs4
