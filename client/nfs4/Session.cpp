// A session's normal path: setup (EXCHANGE_ID, CREATE_SESSION,
// RECLAIM_COMPLETE), submit and the steps of a reply, the queue for slots,
// lease renewal and teardown. Riding through lost connections and lost
// sessions is SessionRecovery.cpp's; a trunk's connections SessionTrunk.cpp's.
// Session.h says the rules.
#include "client/nfs4/Session.h"

#include <algorithm>
#include <cstring>
#include <future>
#include <random>

#include "client/nfs4/BusyRetry.h"

namespace nfsrdma::nfs4 {

Error Session::statusErrorFor(Op op, std::uint32_t status) {
  return makeError(statusError(status), opName(op));
}

Error Session::malformedError(const CompoundDecoder& d) {
  return makeError(ClientErrc::kMalformedReply, "COMPOUND reply: " + d.malformedReason());
}

Error Session::reclaimCompleteError(std::uint32_t status) {
  return status == kNfs4Ok || status == kErrCompleteAlready
             ? Error{}
             : statusErrorFor(Op::kReclaimComplete, status);
}

namespace {

std::vector<SessionConnection> checkedConnections(
    const std::vector<SessionConnection>& connections) {
  if (connections.empty() ||
      std::any_of(connections.begin(), connections.end(),
                  [](const SessionConnection& c) { return c.rpc == nullptr; })) {
    throw NfsException(
        makeError(ClientErrc::kInvalidArgument, "a session needs at least one connection"));
  }
  return connections;
}

}  // namespace

Session::Session(rpc::RpcClient& rpc, const SessionOptions& options)
    : Session(std::vector<SessionConnection>{SessionConnection{&rpc, false}}, options) {}

Session::Session(const std::vector<SessionConnection>& connections, const SessionOptions& options)
    : conns_(makeConnections(checkedConnections(connections))),
      rpc_(*conns_.front()->rpc),
      options_(options) {
  std::random_device rd;
  for (auto& b : verifier_) b = static_cast<std::uint8_t>(rd());
  if (Error e = exchangeId()) throw NfsException(e);
  NewSession created;
  bool refused = false;  // the server answered CREATE_SESSION with an error status
  if (Error e = createSession(created, refused)) {
    // The client ID would otherwise stay on the server until its lease ran
    // out. Only when the server answered: a silent one would cost another
    // timeout for nothing.
    if (refused) (void)destroyClientIdOnServer();
    throw NfsException(e);
  }
  sessionId_ = created.id;
  fore_ = created.fore;
  slots_ = SlotTable(created.fore.maxRequests);
  stats_.slots = created.fore.maxRequests;
  stats_.slotsAsked = options_.slots;
  lastReply_ = std::chrono::steady_clock::now();
  // Replies can be as large as the server said; a little slack covers the RPC header.
  for (auto& c : conns_) c->rpc->setMaxIncomingMessage(std::size_t{fore_.maxResponseSize} + 1024);

  Error e = joinTrunk();
  if (!e)
    e = roundTrip([](CompoundEncoder& c) { c.reclaimComplete(false); },
                  [](CompoundDecoder& d) -> Error {
                    const std::uint32_t st = d.next(Op::kReclaimComplete);
                    if (!d.ok()) return malformedError(d);
                    return reclaimCompleteError(st);
                  });
  if (!e) {
    e = roundTrip(
        [](CompoundEncoder& c) {
          c.putRootFh();
          c.getAttr(Bitmap{attr::kLeaseTime});
        },
        [this](CompoundDecoder& d) -> Error {
          std::uint32_t st = d.next(Op::kPutRootFh);
          if (st == kNfs4Ok) st = d.next(Op::kGetAttr);
          if (!d.ok()) return malformedError(d);
          if (st != kNfs4Ok) return statusErrorFor(Op::kGetAttr, st);
          Attributes a = d.getAttr();
          if (!d.ok()) return malformedError(d);
          if (a.present.test(attr::kLeaseTime) && a.leaseTime > 0) leaseSeconds_ = a.leaseTime;
          return {};
        });
  }
  if (e) {
    (void)close();
    throw NfsException(e);
  }
  {
    std::lock_guard lock(mu_);
    canRecover_ = true;
  }
  renewThread_ = std::thread([this] { renewLoop(); });
}

Session::~Session() {
  (void)close();
}

Error Session::exchangeId() {
  ExchangeIdResult exchange;
  std::span<const std::uint8_t> owner(
      reinterpret_cast<const std::uint8_t*>(options_.ownerId.data()), options_.ownerId.size());
  if (Error e = sessionlessRoundTrip(
          [&](CompoundEncoder& c) { c.exchangeId(verifier_, owner, kExchgIdFlagUseNonPnfs); },
          [&](CompoundDecoder& d) -> Error {
            const std::uint32_t st = d.next(Op::kExchangeId);
            if (!d.ok()) return malformedError(d);
            if (st != kNfs4Ok) return statusErrorFor(Op::kExchangeId, st);
            exchange = d.exchangeId();
            return d.ok() ? Error{} : malformedError(d);
          })) {
    return e;
  }
  clientId_ = exchange.clientId;
  createSequence_ = exchange.sequenceId;
  server_ = exchange;
  return {};
}

Error Session::createSession(NewSession& out, bool& refused) {
  ChannelAttrs fore;
  fore.maxRequestSize = options_.maxRequestSize;
  fore.maxResponseSize = options_.maxResponseSize;
  fore.maxResponseSizeCached = largestCachedReply(options_.maxOperations);
  fore.maxOperations = options_.maxOperations;
  fore.maxRequests = options_.slots;
  ChannelAttrs back;
  back.maxRequestSize = 4096;
  back.maxResponseSize = 4096;
  back.maxOperations = 2;
  back.maxRequests = 1;
  CreateSessionResult created;
  refused = false;
  if (Error e = sessionlessRoundTrip(
          [&](CompoundEncoder& c) { c.createSession(clientId_, createSequence_, fore, back); },
          [&](CompoundDecoder& d) -> Error {
            const std::uint32_t st = d.next(Op::kCreateSession);
            if (!d.ok()) return malformedError(d);
            if (st != kNfs4Ok) {
              refused = true;
              return statusErrorFor(Op::kCreateSession, st);
            }
            created = d.createSession();
            return d.ok() ? Error{} : malformedError(d);
          })) {
    return e;
  }
  ++createSequence_;  // the client ID's CREATE_SESSION sequence advanced (RFC 8881 18.36.4)
  if (created.fore.maxRequests == 0) {
    (void)destroySessionOnServer(created.session, rpc_);
    refused = true;
    return makeError(ClientErrc::kMalformedReply, "CREATE_SESSION granted no slots");
  }
  // The grant comes from the network: never more slots (memory, requests in
  // flight) or larger replies (input buffers) than we asked for.
  created.fore.maxRequests = std::min(created.fore.maxRequests, fore.maxRequests);
  created.fore.maxResponseSize = std::min(created.fore.maxResponseSize, fore.maxResponseSize);
  out.id = created.session;
  out.fore = created.fore;
  return {};
}

Error Session::sessionlessRoundTrip(rpc::RpcClient& rpc,
                                    const std::function<void(CompoundEncoder&)>& encode,
                                    const std::function<Error(CompoundDecoder&)>& decode) {
  std::promise<Error> done;
  auto future = done.get_future();
  Error e = rpc.call(
      kProcCompound,
      [&](xdr::XdrEncoder& enc) {
        CompoundEncoder c(enc);
        encode(c);
        c.finish();
      },
      [&](const Error& err, xdr::XdrDecoder& dec) {
        if (err) {
          done.set_value(err);
          return;
        }
        CompoundDecoder d(dec);
        done.set_value(d.ok() ? decode(d) : malformedError(d));
      });
  if (e) return e;
  return future.get();
}

Error Session::roundTrip(const Encode& encode, const std::function<Error(CompoundDecoder&)>& decode,
                         const rpc::CallHints& hints) {
  std::promise<Error> done;
  auto future = done.get_future();
  submit(
      encode, [&](const Error& err, CompoundDecoder* d) { done.set_value(err ? err : decode(*d)); },
      hints);
  return future.get();
}

void Session::submit(Encode encode, Decode decode, rpc::CallHints hints) {
  std::unique_lock lock(mu_);
  if (closed_) {
    lock.unlock();
    decode(makeError(ClientErrc::kShutdown, "session closed"), nullptr);
    return;
  }
  auto request =
      std::make_shared<Request>(Request{std::move(encode), std::move(decode), hints, 0, false});
  if (recovering_) {
    waiting_.push_back(std::move(request));
    return;
  }
  if (needNewSession_ && canRecover_) {
    // A recovery gave up with calls of unknown fate on the slots: the next
    // request waits for a new session rather than reuse their sequence ids.
    waiting_.push_back(std::move(request));
    startRecoveryLocked(makeError(ClientErrc::kServerUnreachable, "the last recovery"), false);
    return;
  }
  if (slots_.retired() == slots_.size()) {
    const Error lost = everySlotLost();
    lock.unlock();
    request->decode(lost, nullptr);
    return;
  }
  auto slot = slots_.acquire();
  if (!slot) {
    ++stats_.waitedForSlot;
    waiting_.push_back(std::move(request));
    return;
  }
  const std::uint32_t seq = slots_.nextSequenceId(*slot);
  const std::uint32_t highest = slots_.highestSlotInUse();
  ++stats_.compounds;
  lock.unlock();
  if (const Error e = issue(*slot, seq, highest, request)) {
    // Part of it may have reached the server: it goes again as a replay.
    if (e.code == make_error_code(ClientErrc::kConnectionLost) &&
        awaitReconnect(*slot, seq, request, e)) {
      return;
    }
    releaseAndPump(*slot, SlotOutcome::kNotExecuted);
    request->decode(e, nullptr);
  }
}

Error Session::issue(std::uint32_t slot, std::uint32_t sequenceId, std::uint32_t highest,
                     const RequestPtr& request) {
  request->conn = pick();
  return conns_[request->conn]->rpc->call(
      kProcCompound,
      [&](xdr::XdrEncoder& enc) {
        CompoundEncoder c(enc);
        c.sequence(sessionId_, sequenceId, slot, highest, false);
        request->encode(c);
        request->changesState = c.changesState();
        c.finish();
      },
      [this, slot, sequenceId, request](const Error& err, xdr::XdrDecoder& results) {
        onReply(slot, sequenceId, err, results, request);
      },
      request->hints);
}

// The steps of a reply, in order: a call that failed below NFS, SEQUENCE's
// status, then SEQUENCE's result; each ends the request's use of its slot
// (released, retired, or handed to a new session) before decode hears of it.
void Session::onReply(std::uint32_t slot, std::uint32_t sequenceId, const Error& error,
                      xdr::XdrDecoder& results, const RequestPtr& request) {
  const Decode& decode = request->decode;
  if (error) {
    onCallFailed(slot, sequenceId, error, request);
    return;
  }
  CompoundDecoder d(results);
  const std::uint32_t st = d.next(Op::kSequence);
  if (!d.ok()) {
    const Error e = malformedError(d);
    retire(slot, e);
    decode(e, nullptr);
    return;
  }
  if (st != kNfs4Ok) {
    onSequenceRefused(slot, st, request);
    return;
  }
  const SequenceResult seq = d.sequence();
  if (!d.ok()) {
    const Error e = malformedError(d);
    retire(slot, e);
    decode(e, nullptr);
    return;
  }
  if (seq.session != sessionId_ || seq.slot != slot || seq.sequenceId != sequenceId) {
    const Error e = sequenceMismatch(seq, slot, sequenceId);
    retire(slot, e);
    decode(e, nullptr);
    return;
  }
  {
    std::lock_guard lock(mu_);
    slots_.setTargetHighest(seq.targetHighestSlot);
    lastReply_ = std::chrono::steady_clock::now();
  }
  // ganesha answers a replay it kept no reply for with SEQUENCE itself OK
  // and NFS4ERR_RETRY_UNCACHED_REP as the COMPOUND's status.
  if (request->replaying && d.status() == kErrRetryUncachedRep) {
    onUncachedReplay(slot, request);
    return;
  }
  request->replaying = false;
  releaseAndPump(slot, SlotOutcome::kExecuted);
  decode({}, &d);
}

void Session::onCallFailed(std::uint32_t slot, std::uint32_t sequenceId, const Error& error,
                           const RequestPtr& request) {
  // A lost connection (or one taken for dead after a timeout): the call
  // waits to go again on its slot.
  const Error e = presumeDeadAfterTimeout(*conns_[request->conn]->rpc, error);
  if (e.code == make_error_code(ClientErrc::kConnectionLost) &&
      awaitReconnect(slot, sequenceId, request, e)) {
    return;
  }
  // A call the server may or may not have executed: retire the slot. A
  // reply that was an RPC-level rejection never reached SEQUENCE.
  const bool rejected = error.code == make_error_code(ClientErrc::kRpcDenied) ||
                        error.code == make_error_code(ClientErrc::kRpcAcceptError);
  if (rejected) {
    releaseAndPump(slot, SlotOutcome::kNotExecuted);
  } else {
    retire(slot, e);
  }
  request->decode(e, nullptr);
}

Error Session::sequenceMismatch(const SequenceResult& seq, std::uint32_t slot,
                                std::uint32_t sequenceId) const {
  return makeError(
      ClientErrc::kSequenceMismatch,
      std::string("SEQUENCE reply for ") + (seq.session != sessionId_ ? "another session, " : "") +
          "slot " + std::to_string(seq.slot) + " sequence " + std::to_string(seq.sequenceId) +
          ", expected slot " + std::to_string(slot) + " sequence " + std::to_string(sequenceId));
}

void Session::releaseAndPump(std::uint32_t slot, SlotOutcome outcome, const Error* lossCause) {
  std::unique_lock lock(mu_);
  if (lossCause != nullptr) lastLoss_ = *lossCause;
  slots_.release(slot, outcome);
  stats_.retiredSlots = slots_.retired();
  pump(lock);
  if (slots_.inUse() == 0) idle_.notify_all();
}

void Session::pump(std::unique_lock<std::mutex>& lock) {
  // After close() nothing waits (it failed the queue), so nothing is sent.
  if (needNewSession_ && !waiting_.empty() && canRecover_ && !closed_ && !recovering_) {
    // The slots' sequence ids are of unknown use: requests wait for a new session.
    startRecoveryLocked(makeError(ClientErrc::kServerUnreachable, "the last recovery"), false);
    return;
  }
  while (!waiting_.empty() && !closed_ && !recovering_) {
    if (slots_.retired() == slots_.size()) {
      std::deque<RequestPtr> failed;
      failed.swap(waiting_);
      const Error lost = everySlotLost();
      lock.unlock();
      for (auto& r : failed) r->decode(lost, nullptr);
      lock.lock();
      break;
    }
    auto next = slots_.acquire();
    if (!next) break;
    RequestPtr r = std::move(waiting_.front());
    waiting_.pop_front();
    const std::uint32_t seq = slots_.nextSequenceId(*next);
    const std::uint32_t highest = slots_.highestSlotInUse();
    ++stats_.compounds;
    lock.unlock();
    const Error e = issue(*next, seq, highest, r);
    lock.lock();
    if (e) {  // not sent: the slot is free again for the next waiting request
      if (e.code == make_error_code(ClientErrc::kConnectionLost) && canRecover_ && !stopRenew_ &&
          conns_[r->conn]->rpc->canReconnect() && withinRecoveryTime(*r)) {
        // Part of it may have reached the server: it goes again as a replay
        // (over another connection of a trunk, or after the recovery).
        keepForReplayLocked(Replay{*next, seq, std::move(r)}, e);
        continue;
      }
      slots_.release(*next, SlotOutcome::kNotExecuted);
      lock.unlock();
      r->decode(e, nullptr);
      lock.lock();
    }
  }
}

Error Session::everySlotLost() const {
  if (!lastLoss_ || lastLoss_.code == make_error_code(ClientErrc::kTimedOut)) {
    return makeError(ClientErrc::kTimedOut, "every session slot was lost to timeouts");
  }
  // The cause's code, so a caller that reacts to a closed connection sees one.
  return makeError(lastLoss_.code,
                   "every session slot was lost, the last by: " + lastLoss_.message());
}

void Session::renewLoop() {
  std::unique_lock lock(mu_);
  // A third of the lease, in 64 bits: a server may grant any u32 lease, and
  // a wrapped (or zero) period would send SEQUENCEs back to back.
  const std::uint64_t lease = std::clamp<std::uint64_t>(leaseSeconds_, 3, 24 * 3600);
  const auto period = std::chrono::milliseconds(lease * 1000 / 3);
  const auto due = [this] {
    return untilConnectionDueLocked() == std::chrono::steady_clock::duration::zero();
  };
  while (!stopRenew_) {
    renewWake_.wait_for(
        lock, std::min<std::chrono::steady_clock::duration>(period / 2, untilConnectionDueLocked()),
        [&] { return stopRenew_ || recovering_ || !delayedReplays_.empty() || due(); });
    if (stopRenew_) break;
    if (recovering_) {
      recover(lock);
      continue;
    }
    if (due() && delayedReplays_.empty()) {
      restoreConnections(lock);
      continue;
    }
    if (!delayedReplays_.empty()) {
      // The server is still busy with the originals: give it a moment.
      renewWake_.wait_for(lock, kReplayPause, [this] { return stopRenew_ || recovering_; });
      if (!stopRenew_ && !recovering_) resendDelayedReplays(lock);
      continue;
    }
    if (std::chrono::steady_clock::now() - lastReply_ < period || slots_.inUse() > 0) continue;
    ++stats_.renewals;
    lock.unlock();
    // A bare SEQUENCE renews the lease (RFC 8881 section 8.3); errors show up on the next real
    // call.
    submit([](CompoundEncoder&) {}, [](const Error&, CompoundDecoder*) {});
    lock.lock();
  }
}

Error Session::close() {
  {
    std::unique_lock lock(mu_);
    if (closed_) return {};
    stopRenew_ = true;
    renewWake_.notify_all();
    idle_.notify_all();  // a recovery waiting for the calls in flight stops waiting
  }
  if (renewThread_.joinable()) renewThread_.join();
  std::vector<Replay> stranded;  // calls of a connection no one will restore now
  {
    std::lock_guard lock(mu_);
    stranded.swap(replays_);
    for (auto& r : delayedReplays_) stranded.push_back(std::move(r));
    delayedReplays_.clear();
    for (const auto& r : stranded) slots_.release(r.slot, SlotOutcome::kUnknown);
  }
  for (auto& r : stranded) {
    r.request->decode(
        makeError(ClientErrc::kShutdown, "session closed while its connection was down"), nullptr);
  }
  std::deque<RequestPtr> neverSent;
  {
    std::unique_lock lock(mu_);
    // Let calls in flight finish; each ends by reply or RPC timeout.
    idle_.wait_for(lock, rpc_.timeout() + std::chrono::seconds(1),
                   [this] { return slots_.inUse() == 0 && (waiting_.empty() || recovering_); });
    closed_ = true;
    // A slow server can leave requests still queued for a slot: they end
    // here, not on a destroyed session (or never).
    neverSent.swap(waiting_);
    // Calls whose connection failed while close() began wait for no one now.
    for (auto& r : delayedReplays_) replays_.push_back(std::move(r));
    delayedReplays_.clear();
    for (auto& r : replays_) {
      slots_.release(r.slot, SlotOutcome::kUnknown);
      neverSent.push_back(std::move(r.request));
    }
    replays_.clear();
  }
  for (auto& w : neverSent) {
    w->decode(makeError(ClientErrc::kShutdown, "session closed before the request got a slot"),
              nullptr);
  }
  {
    // A request the queue handed a slot just before may still be in flight;
    // DESTROY_SESSION under it would get NFS4ERR_DELAY (RFC 8881 18.37.3).
    std::unique_lock lock(mu_);
    idle_.wait_for(lock, rpc_.timeout() + std::chrono::seconds(1),
                   [this] { return slots_.inUse() == 0; });
  }
  Error first = destroyWhenNotBusy(
      [this] { return destroySessionOnServer(sessionId_, *conns_[pick()]->rpc); });
  Error second = destroyWhenNotBusy([this] { return destroyClientIdOnServer(); });
  return first ? first : second;
}

// A call that timed out on our side may still be running on the server. Until
// it ends, DESTROY_SESSION gets NFS4ERR_DELAY (RFC 8881 18.37.3) and
// DESTROY_CLIENTID NFS4ERR_CLIENTID_BUSY while the session or state remains
// (18.50.3). Linux's nfs4_proc_destroy_clientid waits a second and tries
// again, ten times; the budget here bounds close() the same way.
Error Session::destroyWhenNotBusy(const std::function<Error()>& destroy) {
  BusyRetry retry(options_.teardownBudget, BusyRetry::Clock::now());
  for (;;) {
    Error e = destroy();
    const bool busy = e.code.category() == nfs4Category() &&
                      (e.code.value() == static_cast<int>(kErrDelay) ||
                       e.code.value() == static_cast<int>(kErrClientIdBusy));
    if (!busy) return e;
    const auto pause = retry.nextPause(BusyRetry::Clock::now());
    if (!pause) return e;  // the budget is spent: the server's answer stands
    {
      std::lock_guard lock(mu_);
      ++stats_.teardownRetries;
    }
    std::this_thread::sleep_for(*pause);
  }
}

Error Session::destroySessionOnServer(const SessionId& session, rpc::RpcClient& via) {
  return sessionlessRoundTrip(
      via, [&session](CompoundEncoder& c) { c.destroySession(session); },
      [](CompoundDecoder& d) -> Error {
        const std::uint32_t st = d.next(Op::kDestroySession);
        if (!d.ok()) return malformedError(d);
        return st == kNfs4Ok ? Error{} : statusErrorFor(Op::kDestroySession, st);
      });
}

Error Session::destroyClientIdOnServer() {
  return sessionlessRoundTrip(
      *conns_[pick()]->rpc, [this](CompoundEncoder& c) { c.destroyClientId(clientId_); },
      [](CompoundDecoder& d) -> Error {
        const std::uint32_t st = d.next(Op::kDestroyClientId);
        if (!d.ok()) return malformedError(d);
        return st == kNfs4Ok ? Error{} : statusErrorFor(Op::kDestroyClientId, st);
      });
}

SessionStats Session::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace nfsrdma::nfs4
