// Riding through (Session.h says the rules): a call whose connection failed
// keeps its slot and goes again as a replay; the renewal thread reconnects
// and binds (recover, restore), or replaces a session the server lost
// (establishNewSession, with the owner's reclaims); then the waiting
// requests resume, or fail once recovery-timeout is spent. The normal path
// is Session.cpp's; a trunk's per-connection ride-through SessionTrunk.cpp's.
#include <algorithm>
#include <chrono>
#include <deque>
#include <string>
#include <vector>

#include "client/nfs4/BusyRetry.h"
#include "client/nfs4/Session.h"

namespace nfsrdma::nfs4 {

namespace {

// What a later attempt may fix: the connection (lost again, or not made).
bool worthAnotherTry(const Error& e) {
  return e.code == make_error_code(ClientErrc::kConnectionLost) ||
         e.code == make_error_code(ClientErrc::kConnectionClosed) ||
         e.code == make_error_code(ClientErrc::kTimedOut) || BusyRetry::busy(e);
}

}  // namespace

Error Session::establishNewSession(NewSession& out, SlotTable& table, bool& newClientId,
                                   std::string& reclaimed) {
  bool refused = false;
  Error e = createSession(out, refused);
  newClientId =
      e && (e.code == statusError(kErrStaleClientId) || e.code == statusError(kErrExpired));
  if (newClientId) {
    // The client ID went with the lease (or the server's restart), and its
    // state with it: a new one under the same owner, which is what lets a
    // restarted server find our record and accept reclaims.
    e = exchangeId();
    if (!e) reclaimPending_ = true;  // until RECLAIM_COMPLETE, also on a later attempt
    if (!e) e = createSession(out, refused);
  }
  newClientId = reclaimPending_;
  if (e) return e;
  // Requests are built for the first session's limits (fore() never
  // changes): a new session must allow at least as much.
  if (out.fore.maxOperations < fore_.maxOperations ||
      out.fore.maxRequestSize < fore_.maxRequestSize ||
      out.fore.maxResponseSize < fore_.maxResponseSize) {
    (void)destroySessionOnServer(out.id, rpc_);
    return makeError(ClientErrc::kMalformedReply,
                     "the new session's limits are below the first one's");
  }
  table = SlotTable(std::min(out.fore.maxRequests, fore_.maxRequests));
  const NewSessionCall call = [&](const std::function<void(CompoundEncoder&)>& encode,
                                  const std::function<Error(CompoundDecoder&)>& decode) {
    return callOnNewSession(out.id, table, encode, decode);
  };
  const bool reclaim = reclaimPending_ && options_.reclaim;
  if (reclaim) reclaimed = options_.reclaim(ReclaimPhase::kReclaim, call);
  // A new client ID must say it reclaims nothing more before it opens
  // anything (RFC 8881 18.51); on the old one the server answers
  // COMPLETE_ALREADY.
  e = callOnNewSession(
      out.id, table, [](CompoundEncoder& c) { c.reclaimComplete(false); },
      [](CompoundDecoder& d) -> Error {
        const std::uint32_t rc = d.next(Op::kReclaimComplete);
        if (!d.ok()) return malformedError(d);
        return reclaimCompleteError(rc);
      });
  if (!e) reclaimPending_ = false;
  if (!e && reclaim) {
    const std::string reopened = options_.reclaim(ReclaimPhase::kReopen, call);
    if (!reopened.empty()) reclaimed += (reclaimed.empty() ? "" : "; ") + reopened;
  }
  return e;
}

Error Session::callOnNewSession(const SessionId& id, SlotTable& table,
                                const std::function<void(CompoundEncoder&)>& encode,
                                const std::function<Error(CompoundDecoder&)>& decode) {
  {
    std::lock_guard lock(mu_);
    if (stopRenew_) return makeError(ClientErrc::kShutdown, "session closing");
    if (canRecover_ && std::chrono::steady_clock::now() > recoveryDeadline_) {
      return makeError(ClientErrc::kServerUnreachable,
                       "setting up the new session past recovery-timeout");
    }
  }
  const auto slot = table.acquire();
  if (!slot) return makeError(ClientErrc::kInvalidArgument, "no free slot on the new session");
  const std::uint32_t sequenceId = table.nextSequenceId(*slot);
  SlotOutcome outcome = SlotOutcome::kUnknown;
  Error e = sessionlessRoundTrip(
      [&](CompoundEncoder& c) {
        c.sequence(id, sequenceId, *slot, *slot, false);
        encode(c);
      },
      [&](CompoundDecoder& d) -> Error {
        const std::uint32_t st = d.next(Op::kSequence);
        if (!d.ok()) return malformedError(d);
        if (st != kNfs4Ok) {
          outcome = SlotOutcome::kNotExecuted;
          return statusErrorFor(Op::kSequence, st);
        }
        d.sequence();
        outcome = SlotOutcome::kExecuted;
        return d.ok() ? decode(d) : malformedError(d);
      });
  table.release(*slot, outcome);
  return e;
}

std::string Session::seconds(std::chrono::steady_clock::duration d) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + " s";
}

bool Session::sessionGone(const Error& e) {
  return e.code == statusError(kErrBadSession) || e.code == statusError(kErrDeadSession) ||
         e.code == statusError(kErrStaleClientId) || e.code == statusError(kErrExpired);
}

void Session::recover(std::unique_lock<std::mutex>& lock) {
  // Nothing may use the session while its connection, id or slots change:
  // the calls in flight end first (by reply, RPC timeout or the lost
  // connection, which leaves them waiting as replays).
  idle_.wait_for(lock, rpc_.timeout() + std::chrono::seconds(1),
                 [this] { return slots_.inUse() == replays_.size() || stopRenew_; });
  if (stopRenew_) return;  // close() ends the waiting requests
  if (slots_.inUse() != replays_.size()) {
    failRecovery(lock, makeError(ClientErrc::kTimedOut, "calls on the lost session did not end"));
    return;
  }
  const auto deadline = outageStart_ + options_.recoveryTimeout;
  recoveryDeadline_ = deadline;
  leftLiveSession_ = false;
  const bool sessionLost = !connectionDown_ || needNewSession_;
  NewSession fresh;
  SlotTable table{1};
  bool newClientId = false;
  Error e;
  std::string reclaimed;
  // A recovery gave up with calls of unknown fate on the slots: the server
  // may still have the session, which the new one replaces.
  const bool dropOld = needNewSession_;
  lock.unlock();
  const Restored how =
      restore(deadline, sessionLost, dropOld, fresh, table, newClientId, e, reclaimed);
  lock.lock();
  if (how == Restored::kFailed) {
    failRecovery(lock, e);
    return;
  }
  const auto outage = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - outageStart_);
  stats_.lastOutageMillis = static_cast<std::uint64_t>(outage.count());
  stats_.outageMillis += stats_.lastOutageMillis;
  // Said before any request goes again, so the notice comes before what
  // those requests report.
  const std::string notice = outageSummary(how, newClientId, reclaimed);
  const auto& tell = how == Restored::kBound ? options_.onRecovered : options_.onReplaced;
  if (tell) {
    lock.unlock();
    tell(notice);
    lock.lock();
  }
  if (how == Restored::kBound) {
    resumeOnBoundConnection(lock);
  } else {
    resumeOnNewSession(lock, fresh, table);
  }
}

Session::Restored Session::restore(std::chrono::steady_clock::time_point deadline, bool sessionLost,
                                   bool dropOld, NewSession& fresh, SlotTable& table,
                                   bool& newClientId, Error& error, std::string& reclaimed) {
  const auto now = std::chrono::steady_clock::now();
  const auto left = deadline > now ? deadline - now : std::chrono::steady_clock::duration::zero();
  BusyRetry backoff(std::chrono::ceil<std::chrono::milliseconds>(left), now,
                    options_.maxReconnectPause);
  // A connection recovery starts with a new connection even if the RPC
  // layer has not yet heard of the failure; later rounds only replace one
  // that failed again (a busy server is asked again on the same one).
  bool mustReconnect = !sessionLost;
  for (;;) {
    Error e;
    if (rpc_.connectionLost() || mustReconnect) e = reconnectOnce();
    mustReconnect = mustReconnect && e;  // until one is made
    if (!e && !sessionLost) {
      e = bindConnection();
      if (!e) return Restored::kBound;
      // The server lost the session (it restarted), or will not bind this
      // connection to a live one (ganesha keeps at most 16 per session):
      // a new session then; opens belong to the client ID and survive it.
      // A busy server is asked again.
      if (sessionGone(e) || (e.code.category() == nfs4Category() && !BusyRetry::busy(e))) {
        leftLiveSession_ = !sessionGone(e);
        sessionLost = true;
        e = {};
      }
    }
    if (!e && sessionLost) {
      if (dropOld) dropLiveSession();
      e = establishNewSession(fresh, table, newClientId, reclaimed);
      if (!e) return Restored::kNewSession;
    }
    // Unanswered on the connection just made: the next round makes another.
    e = presumeDeadAfterTimeout(rpc_, e);
    const bool again = worthAnotherTry(e) || rpc_.connectionLost();
    const auto pause = again && rpc_.canReconnect()
                           ? backoff.nextPause(std::chrono::steady_clock::now())
                           : std::nullopt;
    if (!e) e = makeError(ClientErrc::kConnectionLost, "the connection is down");
    std::unique_lock lock(mu_);
    if (!pause || renewWake_.wait_for(lock, *pause, [this] { return stopRenew_; })) {
      const bool timedOut = again && !stopRenew_;
      error = !timedOut ? e
                        : makeError(ClientErrc::kServerUnreachable,
                                    rpc_.describe() + ": no service for " +
                                        seconds(std::chrono::steady_clock::now() - outageStart_) +
                                        " (recovery-timeout " +
                                        std::to_string(options_.recoveryTimeout.count()) + " ms, " +
                                        std::to_string(backoff.retries() + 1) +
                                        " attempts); last: " + e.message());
      return Restored::kFailed;
    }
  }
}

void Session::dropLiveSession() {
  // As the kernel client does on a session reset: the session goes before
  // another replaces it, or the server keeps its slots and reply cache
  // until the lease ends and refuses DESTROY_CLIENTID as busy until then.
  // DESTROY_SESSION must come on a connection bound to it (RFC 8881
  // 18.37.3), and this one is new. Best effort: a server that lost the
  // session answers the bind with BADSESSION, and nothing is lost when the
  // destroy fails.
  if (bindConnection()) return;
  (void)destroySessionOnServer(sessionId_, rpc_);
}

Error Session::reconnectOnce() {
  Error e = rpc_.reconnect();
  if (!e) {
    std::lock_guard lock(mu_);
    ++stats_.reconnects;
  }
  return e;
}

Error Session::bindConnection(rpc::RpcClient& rpc) {
  const SessionId id = sessionId_;  // written only on this (the renewal) thread
  return sessionlessRoundTrip(
      rpc, [&id](CompoundEncoder& c) { c.bindConnToSession(id); },
      [&id](CompoundDecoder& d) -> Error {
        const std::uint32_t st = d.next(Op::kBindConnToSession);
        if (!d.ok()) return malformedError(d);
        if (st != kNfs4Ok) return statusErrorFor(Op::kBindConnToSession, st);
        const SessionId bound = d.bindConnToSession();
        if (!d.ok()) return malformedError(d);
        if (bound != id) {
          return makeError(ClientErrc::kSequenceMismatch,
                           "BIND_CONN_TO_SESSION bound another session");
        }
        return {};
      });
}

std::string Session::outageSummary(Restored how, bool newClientId,
                                   const std::string& reclaimed) const {
  const std::string account =
      seconds(std::chrono::milliseconds(stats_.lastOutageMillis)) + " without service";
  if (how == Restored::kBound) {
    return lostBy_.message() + "; reconnected and resent " + std::to_string(replays_.size()) +
           " calls in flight on their slots (" + account + ")";
  }
  std::string s = "the server no longer knew this client's session (" + lostBy_.message() +
                  (connectionDown_ ? ", then it had forgotten the session: it restarted" : "") +
                  "); a new session replaced it";
  if (newClientId) {
    s += " under a new client ID: ";
    s += reclaimed.empty() ? "files opened before are no longer open on the server" : reclaimed;
  }
  return s + " (" + account + ")";
}

void Session::resumeOnBoundConnection(std::unique_lock<std::mutex>& lock) {
  std::vector<Replay> again;
  again.swap(replays_);
  recovering_ = false;
  connectionDown_ = false;
  conns_.front()->state = ConnState::kUp;
  lastReply_ = std::chrono::steady_clock::now();
  stats_.replayed += again.size();
  const std::uint32_t highest = slots_.highestSlotInUse();
  lock.unlock();
  for (auto& r : again) {
    r.request->replaying = true;
    const Error e = issue(r.slot, r.sequenceId, highest, r.request);
    if (!e) continue;
    // Not sent: it may still have run before, so it stays a replay.
    if (!awaitReconnect(r.slot, r.sequenceId, r.request, e)) {
      retire(r.slot, e);
      r.request->decode(e, nullptr);
    }
  }
  lock.lock();
  pump(lock);
}

void Session::resendDelayedReplays(std::unique_lock<std::mutex>& lock) {
  std::vector<Replay> again;
  again.swap(delayedReplays_);
  const std::uint32_t highest = slots_.highestSlotInUse();
  lock.unlock();
  for (auto& r : again) {
    const Error e = issue(r.slot, r.sequenceId, highest, r.request);
    if (e && !awaitReconnect(r.slot, r.sequenceId, r.request, e)) {
      retire(r.slot, e);
      r.request->decode(e, nullptr);
    }
  }
  lock.lock();
}

void Session::resumeOnNewSession(std::unique_lock<std::mutex>& lock, NewSession& fresh,
                                 SlotTable& table) {
  // The calls in flight go first, as new requests: the old slots, and
  // whatever the server had run of them, went with the old session.
  for (auto& r : delayedReplays_) replays_.push_back(std::move(r));
  delayedReplays_.clear();
  // Replays of a session the server still has may have run there: one that
  // changes state must not run again on the new one.
  std::vector<RequestPtr> mayHaveRun;
  for (auto it = replays_.rbegin(); it != replays_.rend(); ++it) {
    it->request->replaying = false;
    if (leftLiveSession_ && it->request->changesState) {
      mayHaveRun.push_back(it->request);
      continue;
    }
    ++stats_.resent;
    ++it->request->resends;
    waiting_.push_front(it->request);
  }
  replays_.clear();
  recovering_ = false;
  connectionDown_ = false;
  needNewSession_ = false;
  unbindOthersLocked();
  sessionId_ = fresh.id;
  slots_ = std::move(table);
  stats_.slots = slots_.size();
  stats_.retiredSlots = 0;
  ++stats_.recoveries;
  lastLoss_ = {};
  lastReply_ = std::chrono::steady_clock::now();
  pump(lock);
  if (slots_.inUse() == 0) idle_.notify_all();
  if (mayHaveRun.empty()) return;
  const Error e =
      makeError(ClientErrc::kConnectionLost,
                "the connection could not be bound to the session again, and the request "
                "may have run on it (" +
                    lostBy_.message() + ")");
  lock.unlock();
  for (auto& r : mayHaveRun) r->decode(e, nullptr);
  lock.lock();
}

void Session::failRecovery(std::unique_lock<std::mutex>& lock, const Error& e) {
  // The requests that waited end with why; later ones try again on the next loss.
  const Error why = e.code == make_error_code(ClientErrc::kServerUnreachable)
                        ? e
                        : makeError(e.code, "replacing the session the server lost: " + e.context);
  std::vector<Replay> lost;
  lost.swap(replays_);
  std::deque<RequestPtr> failed;
  failed.swap(waiting_);
  // Whether the server ran the lost calls is unknown, so their slots'
  // sequence ids are too: the next recovery makes a new session.
  for (const auto& r : lost) slots_.release(r.slot, SlotOutcome::kNotExecuted);
  if (!lost.empty()) needNewSession_ = true;
  recovering_ = false;
  connectionDown_ = false;
  ++stats_.unrecovered;
  lock.unlock();
  for (auto& r : lost) r.request->decode(why, nullptr);
  for (auto& r : failed) r->decode(why, nullptr);
  lock.lock();
  if (slots_.inUse() == 0) idle_.notify_all();
}

bool Session::awaitReconnect(std::uint32_t slot, std::uint32_t sequenceId,
                             const RequestPtr& request, const Error& cause) {
  std::lock_guard lock(mu_);
  if (closed_ || stopRenew_ || !canRecover_ || !conns_[request->conn]->rpc->canReconnect() ||
      !withinRecoveryTime(*request)) {
    return false;
  }
  keepForReplayLocked(Replay{slot, sequenceId, request}, cause);
  return true;
}

Error Session::presumeDeadAfterTimeout(rpc::RpcClient& rpc, const Error& e) {
  if (e.code != make_error_code(ClientErrc::kTimedOut) || !rpc.canReconnect()) return e;
  {
    std::lock_guard lock(mu_);
    if (!canRecover_ || closed_ || stopRenew_) return e;
  }
  const std::string why = e.context + "; the connection is taken for dead and replaced";
  rpc.presumeDead(why);
  return makeError(ClientErrc::kConnectionLost, why);
}

bool Session::withinRecoveryTime(Request& request) const {
  const auto now = std::chrono::steady_clock::now();
  if (request.firstLoss == std::chrono::steady_clock::time_point{}) request.firstLoss = now;
  return now - request.firstLoss <= options_.recoveryTimeout;
}

void Session::startRecoveryLocked(const Error& cause, bool connection) {
  if (connection) connectionDown_ = true;
  // Replays waiting out a DELAY wait for the recovery with the rest.
  for (auto& r : delayedReplays_) replays_.push_back(std::move(r));
  delayedReplays_.clear();
  if (recovering_) return;
  recovering_ = true;
  lostBy_ = cause;
  outageStart_ = std::chrono::steady_clock::now();
  ++stats_.outages;
  renewWake_.notify_all();
}

void Session::onUncachedReplay(std::uint32_t slot, const RequestPtr& request) {
  // The server ran the slot's request but kept no reply: the sequence id
  // is spent. A request that changes nothing goes again as a new one; one
  // that changes state may have run, so running it again could apply it twice.
  std::unique_lock lock(mu_);
  ++stats_.uncachedReplays;
  request->replaying = false;
  slots_.release(slot, SlotOutcome::kExecuted);
  if (!request->changesState && !closed_) {
    waiting_.push_front(request);
    pump(lock);
    return;
  }
  pump(lock);
  if (slots_.inUse() == 0) idle_.notify_all();
  lock.unlock();
  request->decode(makeError(statusError(kErrRetryUncachedRep),
                            "a request resent after a lost connection (it may have run once)"),
                  nullptr);
}

void Session::onSequenceRefused(std::uint32_t slot, std::uint32_t st, const RequestPtr& request) {
  // The server no longer knows the session (or, with EXPIRED and
  // STALE_CLIENTID, its client ID: ganesha says EXPIRED until its reaper
  // removes the client): SEQUENCE ran nothing, so the request waits for a
  // new session and goes again as it was.
  constexpr unsigned kMaxResends = 2;
  if (st == kErrRetryUncachedRep) {
    onUncachedReplay(slot, request);
    return;
  }
  if (st == kErrDelay && request->replaying) {
    // The server is still running the original (its old connection's
    // request): the replay goes again on the same slot and sequence id, a
    // little later. As a new request it could run twice.
    std::lock_guard lock(mu_);
    if (!closed_ && !stopRenew_ && withinRecoveryTime(*request)) {
      delayedReplays_.push_back(Replay{slot, slots_.nextSequenceId(slot), request});
      if (recovering_) {
        replays_.push_back(std::move(delayedReplays_.back()));
        delayedReplays_.pop_back();
        if (slots_.inUse() == replays_.size()) idle_.notify_all();
      }
      renewWake_.notify_all();
      return;
    }
  }
  request->replaying = false;
  const bool sessionLost =
      st == kErrBadSession || st == kErrDeadSession || st == kErrExpired || st == kErrStaleClientId;
  if (sessionLost && request->resends < kMaxResends && waitForNewSession(slot, st, request)) return;
  const Error e = statusErrorFor(Op::kSequence, st);
  if (st == kErrSeqMisordered || st == kErrBadSlot) {
    // The server disowns this slot or its sequence id: the same request
    // on it would fail the same way, so it leaves the table.
    retire(slot, e);
  } else {
    releaseAndPump(slot, SlotOutcome::kNotExecuted);
  }
  request->decode(e, nullptr);
}

bool Session::waitForNewSession(std::uint32_t slot, std::uint32_t st, const RequestPtr& request) {
  std::lock_guard lock(mu_);
  if (closed_ || stopRenew_ || !canRecover_) return false;
  ++request->resends;
  slots_.release(slot, SlotOutcome::kNotExecuted);
  waiting_.push_front(request);
  startRecoveryLocked(statusErrorFor(Op::kSequence, st), false);
  if (slots_.inUse() == replays_.size()) idle_.notify_all();
  return true;
}

}  // namespace nfsrdma::nfs4
