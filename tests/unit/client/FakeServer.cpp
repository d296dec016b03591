#include "tests/unit/client/FakeServer.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <span>
#include <thread>

#include "client/nfs4/Nfs4Constants.h"
#include "client/nfs4/Nfs4Status.h"
#include "client/xdr/XdrDecoder.h"

namespace nfsrdma::testpeer {
namespace {

using nfs4::Op;

constexpr std::uint32_t kErrNotSupp = 10004;
constexpr std::uint32_t kErrStale = 70;
constexpr std::uint32_t kErrNoFileHandle = 10020;
constexpr std::uint32_t kMaxBitmapWords = 8;
constexpr std::size_t kMaxWriteData = 16U << 20;

// File handles: the root directory, and 'f' followed by a file's name.
const Bytes kRootFh{'/'};
Bytes fileHandle(const std::string& name) {
  Bytes fh{'f'};
  fh.insert(fh.end(), name.begin(), name.end());
  return fh;
}
constexpr std::uint32_t kErrBadStateId = 10025;
// Every WRITE and COMMIT reports the same verifier until the server restarts.
std::array<std::uint8_t, nfs4::kVerifierSize> writeVerifier(std::uint8_t boot) {
  return {1, 2, 3, 4, 5, 6, 7, static_cast<std::uint8_t>(8 + boot)};
}

// A stateid's "other" names the server start it was made in (byte 5).
std::uint8_t stateIdBoot(xdr::XdrDecoder& dec) {
  (void)dec.getU32();
  const auto other = dec.getFixedOpaque(nfs4::kStateIdOtherSize);
  return other.size() == nfs4::kStateIdOtherSize ? other[5] : 0;
}

void putStateId(xdr::XdrEncoder& enc, std::uint8_t boot) {
  enc.putU32(1);
  enc.putFixedOpaque(
      std::array<std::uint8_t, nfs4::kStateIdOtherSize>{'s', 't', 'a', 't', 'e', boot});
}

// OPEN4args as CompoundEncoder::open writes them (UNCHECKED create or none, CLAIM_NULL).
bool parseOpen(xdr::XdrDecoder& dec, CompoundCall::FileArgs& a) {
  (void)dec.getU32();                       // seqid
  (void)dec.getU32();                       // share_access
  (void)dec.getU32();                       // share_deny
  (void)dec.getU64();                       // client id
  (void)dec.getOpaque(nfs4::kOpaqueLimit);  // owner
  a.create = dec.getU32() == nfs4::kOpenCreate;
  if (a.create) {
    if (dec.getU32() != nfs4::kCreateUnchecked) return false;
    const std::uint32_t words = dec.getU32();
    if (words > kMaxBitmapWords) return false;
    for (std::uint32_t w = 0; w < words; ++w) (void)dec.getU32();
    (void)dec.getOpaque(nfs4::kOpaqueLimit);  // attribute values
  }
  a.claim = dec.getU32();
  switch (a.claim) {
    case nfs4::kClaimNull:
      a.name = std::string(dec.getString(nfs4::kOpaqueLimit));
      break;
    case nfs4::kClaimPrevious:
      (void)dec.getU32();
      break;  // delegate_type
    case nfs4::kClaimFh:
      break;
    default:
      return false;
  }
  return dec.ok();
}

// The arguments of the file operations (PUTFH to CLOSE); false if op is not one.
bool parseFileArgs(Op op, xdr::XdrDecoder& dec, CompoundCall::FileArgs& a, bool& ok) {
  switch (op) {
    case Op::kPutFh: {
      const auto fh = dec.getOpaque(nfs4::kFhMaxSize);
      a.fh.assign(fh.begin(), fh.end());
      return true;
    }
    case Op::kLookup:
      a.name = std::string(dec.getString(nfs4::kOpaqueLimit));
      return true;
    case Op::kGetFh:
      return true;
    case Op::kOpen:
      ok = parseOpen(dec, a);
      return true;
    case Op::kRead:
      a.stateBoot = stateIdBoot(dec);
      a.offset = dec.getU64();
      a.count = dec.getU32();
      return true;
    case Op::kWrite: {
      a.stateBoot = stateIdBoot(dec);
      a.offset = dec.getU64();
      (void)dec.getU32();  // stable
      const auto data = dec.getOpaque(kMaxWriteData);
      a.data.assign(data.begin(), data.end());
      return true;
    }
    case Op::kCommit:
      (void)dec.getU64();
      (void)dec.getU32();
      return true;
    case Op::kClose:
      (void)dec.getU32();  // seqid
      a.stateBoot = stateIdBoot(dec);
      return true;
    default:
      return false;
  }
}

bool readChannelAttrs(xdr::XdrDecoder& dec, nfs4::ChannelAttrs& c) {
  c.headerPadSize = dec.getU32();
  c.maxRequestSize = dec.getU32();
  c.maxResponseSize = dec.getU32();
  c.maxResponseSizeCached = dec.getU32();
  c.maxOperations = dec.getU32();
  c.maxRequests = dec.getU32();
  const std::uint32_t ird = dec.getU32();
  if (ird > 1) return false;
  for (std::uint32_t i = 0; i < ird; ++i) (void)dec.getU32();
  return dec.ok();
}

void putChannelAttrs(xdr::XdrEncoder& enc, const nfs4::ChannelAttrs& c) {
  enc.putU32(c.headerPadSize);
  enc.putU32(c.maxRequestSize);
  enc.putU32(c.maxResponseSize);
  enc.putU32(c.maxResponseSizeCached);
  enc.putU32(c.maxOperations);
  enc.putU32(c.maxRequests);
  enc.putU32(0);  // no rdma_ird
}

nfs4::SessionId makeSessionId(std::uint32_t generation = 0) {
  nfs4::SessionId id{};
  for (std::size_t i = 0; i < id.size(); ++i) id[i] = static_cast<std::uint8_t>(0xa0 + i);
  id[0] = static_cast<std::uint8_t>(id[0] + generation);
  return id;
}

}  // namespace

std::optional<CompoundCall> parseCompound(const RpcCall& call) {
  CompoundCall c;
  c.rpc = call;
  xdr::XdrDecoder dec(call.args);
  (void)dec.getOpaque(nfs4::kOpaqueLimit);  // tag
  const std::uint32_t minor = dec.getU32();
  const std::uint32_t count = dec.getU32();
  if (!dec.ok() || minor != nfs4::kMinorVersion) return std::nullopt;
  for (std::uint32_t i = 0; i < count && dec.ok(); ++i) {
    const std::uint32_t op = dec.getU32();
    c.ops.push_back(op);
    c.args.emplace_back();
    bool argsOk = true;
    if (parseFileArgs(static_cast<Op>(op), dec, c.args.back(), argsOk)) {
      if (!argsOk) return std::nullopt;
      continue;
    }
    switch (static_cast<Op>(op)) {
      case Op::kSequence: {
        SequenceArgs s;
        const auto sid = dec.getFixedOpaque(nfs4::kSessionIdSize);
        if (sid.size() == s.session.size()) std::memcpy(s.session.data(), sid.data(), sid.size());
        s.sequenceId = dec.getU32();
        s.slot = dec.getU32();
        s.highestSlot = dec.getU32();
        s.cacheThis = dec.getBool();
        if (i == 0) c.sequence = s;
        break;
      }
      case Op::kPutRootFh:
        break;
      case Op::kGetAttr: {
        const std::uint32_t n = dec.getU32();
        if (n > kMaxBitmapWords) return std::nullopt;
        for (std::uint32_t w = 0; w < n; ++w) {
          const std::uint32_t v = dec.getU32();
          if (w < nfs4::Bitmap::kWords) c.getAttrRequest.setWord(w, v);
        }
        break;
      }
      case Op::kReclaimComplete:
        (void)dec.getBool();
        break;
      case Op::kExchangeId: {
        (void)dec.getFixedOpaque(nfs4::kVerifierSize);
        (void)dec.getOpaque(nfs4::kOpaqueLimit);  // co_ownerid
        (void)dec.getU32();                       // flags
        if (dec.getU32() != nfs4::kSp4None) return std::nullopt;
        const std::uint32_t impls = dec.getU32();
        if (impls > 1) return std::nullopt;
        for (std::uint32_t k = 0; k < impls; ++k) {
          (void)dec.getOpaque(nfs4::kOpaqueLimit);
          (void)dec.getOpaque(nfs4::kOpaqueLimit);
          (void)dec.getU64();
          (void)dec.getU32();
        }
        break;
      }
      case Op::kCreateSession: {
        c.createSessionClientId = dec.getU64();
        c.createSessionSequence = dec.getU32();
        (void)dec.getU32();  // flags
        nfs4::ChannelAttrs back;
        if (!readChannelAttrs(dec, c.foreRequested) || !readChannelAttrs(dec, back))
          return std::nullopt;
        (void)dec.getU32();  // cb_program
        const std::uint32_t secs = dec.getU32();
        for (std::uint32_t k = 0; k < secs && dec.ok(); ++k) {
          if (dec.getU32() != rpc::kAuthNone) return std::nullopt;  // only AUTH_NONE is expected
        }
        break;
      }
      case Op::kDestroySession:
        (void)dec.getFixedOpaque(nfs4::kSessionIdSize);
        break;
      case Op::kBindConnToSession: {
        const auto sid = dec.getFixedOpaque(nfs4::kSessionIdSize);
        if (sid.size() == c.bindSession.size())
          std::memcpy(c.bindSession.data(), sid.data(), sid.size());
        (void)dec.getU32();   // direction
        (void)dec.getBool();  // rdma mode
        break;
      }
      case Op::kDestroyClientId:
        (void)dec.getU64();
        break;
      default:
        return dec.ok() ? std::optional<CompoundCall>(std::move(c)) : std::nullopt;
    }
  }
  if (!dec.ok()) return std::nullopt;
  return c;
}

FakeNfs41Server::FakeNfs41Server(ScriptedPeer& peer, FakeServerConfig config)
    : peer_(peer), config_(config), sessionId_(makeSessionId()), clientId_(config.clientId) {
  attach(peer_);
}

FakeNfs41Server::~FakeNfs41Server() {
  for (ScriptedPeer* p : peers_) p->stopServing();
}

void FakeNfs41Server::attach(ScriptedPeer& peer) {
  {
    std::lock_guard lock(mu_);
    peers_.push_back(&peer);
  }
  peer.serve([this](ScriptedPeer& p, const RpcCall& call) { onCall(p, call); },
             [this](ScriptedPeer& p) { onIdle(p); });
}

void FakeNfs41Server::scriptNextSequence(SequenceScript script) {
  std::lock_guard lock(mu_);
  scripts_.push_back(std::move(script));
}

void FakeNfs41Server::scriptEverySequence(SequenceScript script) {
  std::lock_guard lock(mu_);
  everySequence_ = std::move(script);
}

void FakeNfs41Server::failNextCreateSession(std::uint32_t status) {
  std::lock_guard lock(mu_);
  createSessionFailures_.push_back(status);
}

void FakeNfs41Server::failNextOp(nfs4::Op op, std::uint32_t status) {
  std::lock_guard lock(mu_);
  opFailures_[static_cast<std::uint32_t>(op)].push_back(status);
}

void FakeNfs41Server::restartOnNext(nfs4::Op op) {
  std::lock_guard lock(mu_);
  restartOn_ = static_cast<std::uint32_t>(op);
}

bool FakeNfs41Server::restartFor(const CompoundCall& c) {
  std::vector<ScriptedPeer*> peers;
  {
    std::lock_guard lock(mu_);
    if (!restartOn_ || std::find(c.ops.begin(), c.ops.end(), *restartOn_) == c.ops.end())
      return false;
    restartOn_.reset();
    ++boot_;
    clientId_ = config_.clientId + boot_;
    sessionLive_ = false;
    lastSequenceId_.clear();
    replyCache_.clear();
    busySlots_.clear();
    held_.clear();
    peers = peers_;
  }
  for (ScriptedPeer* p : peers) p->hangUp();
  return true;
}

void FakeNfs41Server::addFile(const std::string& name, Bytes contents) {
  std::lock_guard lock(mu_);
  files_[name] = std::move(contents);
}

std::optional<Bytes> FakeNfs41Server::file(const std::string& name) const {
  std::lock_guard lock(mu_);
  const auto it = files_.find(name);
  if (it == files_.end()) return std::nullopt;
  return it->second;
}

std::uint32_t FakeNfs41Server::takeScriptedStatus(std::uint32_t op) {
  std::lock_guard lock(mu_);
  auto& queue = opFailures_[op];
  if (queue.empty()) return nfs4::kNfs4Ok;
  const std::uint32_t status = queue.front();
  queue.pop_front();
  return status;
}

FakeNfs41Server::Stats FakeNfs41Server::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

bool FakeNfs41Server::waitSequenced(std::size_t n, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return stats_.sequenced >= n; });
}

void FakeNfs41Server::checkSequenceLocked(const SequenceArgs& a) {
  auto violation = [this](std::string what) { stats_.violations.push_back(std::move(what)); };
  if (a.session != sessionId_) violation("SEQUENCE for another session");
  if (stats_.destroySession > 0) violation("SEQUENCE after DESTROY_SESSION");
  if (a.slot >= config_.grantedSlots) {
    violation("slot " + std::to_string(a.slot) + " beyond the " +
              std::to_string(config_.grantedSlots) + " granted");
  }
  if (!busySlots_.insert(a.slot).second) {
    violation("a second request on slot " + std::to_string(a.slot) + " while one is in flight");
  }
  const std::uint32_t expected = lastSequenceId_[a.slot] + 1;
  if (a.sequenceId != expected) {
    violation("slot " + std::to_string(a.slot) + ": sequence id " + std::to_string(a.sequenceId) +
              ", expected " + std::to_string(expected));
  }
  if (a.highestSlot < a.slot) {
    violation("highest slot " + std::to_string(a.highestSlot) + " below the slot used, " +
              std::to_string(a.slot));
  }
  stats_.maxInFlight = std::max(stats_.maxInFlight, busySlots_.size());
}

void FakeNfs41Server::onCall(ScriptedPeer& peer, const RpcCall& call) {
  auto c = parseCompound(call);
  if (!c || call.program != nfs4::kNfsProgram || call.procedure != nfs4::kProcCompound) {
    {
      std::lock_guard lock(mu_);
      stats_.violations.push_back("a call that is not an NFSv4.1 COMPOUND");
    }
    (void)peer.sendRecord(acceptErrorReply(call.xid, rpc::AcceptStat::kGarbageArgs));
    return;
  }
  if (restartFor(*c)) return;
  SequenceScript script;
  bool flush = false;
  std::optional<Bytes> replay;
  {
    std::lock_guard lock(mu_);
    ++stats_.compounds;
    stats_.opLists.push_back(c->ops);
    for (std::uint32_t op : c->ops) {
      if (op == static_cast<std::uint32_t>(Op::kDestroySession)) ++stats_.destroySession;
      if (op == static_cast<std::uint32_t>(Op::kDestroyClientId)) ++stats_.destroyClientId;
    }
    if (c->sequence) {
      const SequenceArgs& a = *c->sequence;
      const auto last = lastSequenceId_.find(a.slot);
      const auto cached = replyCache_.find(a.slot);
      if (a.session == sessionId_ && last != lastSequenceId_.end() &&
          a.sequenceId == last->second && cached != replyCache_.end() &&
          !busySlots_.count(a.slot)) {
        // A retry of the slot's last request: its reply, not a second run (RFC 8881 2.10.6.1).
        stats_.replays.emplace_back(a.slot, a.sequenceId);
        replay = successReply(call.xid, cached->second);
        cv_.notify_all();
      }
    }
    // After a restart, a session of before is unknown: BADSESSION, nothing checked.
    const bool lostSession =
        c->sequence && boot_ > 0 && (!sessionLive_ || c->sequence->session != sessionId_);
    if (c->sequence && !replay && !lostSession) {
      const SequenceArgs& a = *c->sequence;
      ++stats_.sequenced;
      stats_.cacheThis.push_back(a.cacheThis);
      checkSequenceLocked(*c->sequence);
      if (!scripts_.empty()) {
        script = std::move(scripts_.front());
        scripts_.pop_front();
      } else if (everySequence_) {
        script = *everySequence_;
      }
      cv_.notify_all();
      if (script.drop) return;
      if (script.vanish) {
        busySlots_.erase(a.slot);
        return;
      }
      if (config_.holdBatch > 1 && !script.hangUp) {
        held_.push_back({*c, std::move(script)});
        flush = held_.size() >= config_.holdBatch;
        if (!flush) return;
      }
    }
  }
  if (replay) {
    (void)peer.sendRecord(*replay);
    return;
  }
  if (flush) {
    flushHeld(peer);
    return;
  }
  if (script.hangUp) {
    {
      // The request dies with the connection, never run.
      std::lock_guard lock(mu_);
      if (c->sequence) busySlots_.erase(c->sequence->slot);
    }
    peer.hangUp();
    return;
  }
  if (script.loseReply || script.swallowReply) {
    (void)build(*c, script);  // run and cached, never sent
    if (script.loseReply) peer.hangUp();
    return;
  }
  if (script.delay.count() > 0) std::this_thread::sleep_for(script.delay);
  answer(peer, *c, script);
}

void FakeNfs41Server::onIdle(ScriptedPeer& peer) {
  flushHeld(peer);
}

void FakeNfs41Server::flushHeld(ScriptedPeer& peer) {
  std::vector<Held> held;
  {
    std::lock_guard lock(mu_);
    held.swap(held_);
  }
  for (auto it = held.rbegin(); it != held.rend(); ++it) answer(peer, it->call, it->script);
}

void FakeNfs41Server::answer(ScriptedPeer& peer, const CompoundCall& c,
                             const SequenceScript& script) {
  (void)peer.sendRecord(successReply(c.rpc.xid, build(c, script)));
}

Bytes FakeNfs41Server::build(const CompoundCall& c, const SequenceScript& script) {
  Bytes results;
  if (script.rawResults) {
    results = script.rawResults(c);
  } else {
    std::size_t readBytes = 0;
    for (const auto& a : c.args) readBytes += a.count;
    XdrBuilder body(64 * 1024 + readBytes);
    xdr::XdrEncoder& enc = body.enc();
    std::uint32_t compoundStatus = nfs4::kNfs4Ok;
    std::uint32_t count = 0;
    Bytes current;  // the current file handle
    for (std::size_t i = 0; i < c.ops.size(); ++i) {
      const std::uint32_t op = c.ops[i];
      ++count;
      enc.putU32(op);
      std::uint32_t status =
          op == static_cast<std::uint32_t>(Op::kSequence) ? nfs4::kNfs4Ok : takeScriptedStatus(op);
      if (status != nfs4::kNfs4Ok) {
        enc.putU32(status);
        compoundStatus = status;
        break;
      }
      switch (static_cast<Op>(op)) {
        case Op::kSequence: {
          const SequenceArgs& a = c.sequence.value();
          SequenceReply r;
          r.session = sessionId();
          {
            std::lock_guard lock(mu_);
            if (boot_ > 0 && (!sessionLive_ || a.session != sessionId_))
              r.status = nfs4::kErrBadSession;
          }
          r.sequenceId = a.sequenceId;
          r.slot = a.slot;
          r.highestSlot = a.highestSlot;
          r.targetHighestSlot = config_.grantedSlots - 1;
          if (script.edit) script.edit(r);
          status = r.status;
          enc.putU32(status);
          if (status == nfs4::kNfs4Ok) {
            enc.putFixedOpaque(r.session);
            enc.putU32(r.sequenceId);
            enc.putU32(r.slot);
            enc.putU32(r.highestSlot);
            enc.putU32(r.targetHighestSlot);
            enc.putU32(r.statusFlags);
          }
          std::lock_guard lock(mu_);
          busySlots_.erase(a.slot);
          if (status == nfs4::kNfs4Ok) lastSequenceId_[a.slot] = a.sequenceId;  // executed
          break;
        }
        case Op::kExchangeId: {
          status = config_.exchangeIdStatus;
          std::uint64_t clientId = 0;
          {
            std::lock_guard lock(mu_);
            if (status == nfs4::kNfs4Ok) ++stats_.exchangeId;
            clientId = clientId_;
          }
          enc.putU32(status);
          if (status == nfs4::kNfs4Ok) {
            enc.putU64(clientId);
            enc.putU32(1);  // sequence id for CREATE_SESSION
            enc.putU32(nfs4::kExchgIdFlagUseNonPnfs);
            enc.putU32(nfs4::kSp4None);
            enc.putU64(0);  // server_owner.so_minor_id
            enc.putString("scripted-peer");
            enc.putString("scripted-peer-scope");
            enc.putU32(0);  // no implementation id
          }
          break;
        }
        case Op::kCreateSession: {
          status = config_.createSessionStatus;
          nfs4::SessionId created{};
          {
            std::lock_guard lock(mu_);
            if (!createSessionFailures_.empty()) {
              status = createSessionFailures_.front();
              createSessionFailures_.pop_front();
            }
            if (status == nfs4::kNfs4Ok && boot_ > 0 && c.createSessionClientId != clientId_) {
              status = nfs4::kErrStaleClientId;  // a client ID of before the restart
            }
            if (status == nfs4::kNfs4Ok) {
              sessionLive_ = true;
              if (sessionsCreated_++ > 0) {
                sessionId_ = makeSessionId(sessionsCreated_);
                lastSequenceId_.clear();
                replyCache_.clear();
              }
              ++stats_.createSession;
              created = sessionId_;
            }
          }
          enc.putU32(status);
          if (status == nfs4::kNfs4Ok) {
            enc.putFixedOpaque(created);
            enc.putU32(c.createSessionSequence);
            enc.putU32(0);  // flags
            nfs4::ChannelAttrs fore = c.foreRequested;
            fore.maxRequests = config_.grantedSlots;
            putChannelAttrs(enc, fore);
            nfs4::ChannelAttrs back;
            back.maxRequestSize = 4096;
            back.maxResponseSize = 4096;
            back.maxOperations = 2;
            back.maxRequests = 1;
            putChannelAttrs(enc, back);
          }
          break;
        }
        case Op::kGetAttr:
          enc.putU32(status);
          if (c.getAttrRequest.test(nfs4::attr::kLeaseTime)) {
            enc.putU32(1);
            enc.putU32(1U << nfs4::attr::kLeaseTime);
            enc.putU32(4);
            enc.putU32(config_.leaseSeconds);
          } else {
            putFileAttrs(current, c.getAttrRequest, enc);
          }
          break;
        case Op::kPutRootFh:
          current = kRootFh;
          enc.putU32(status);
          break;
        case Op::kPutFh:
        case Op::kLookup:
        case Op::kGetFh:
        case Op::kOpen:
        case Op::kRead:
        case Op::kWrite:
        case Op::kCommit:
        case Op::kClose:
          status = answerFileOp(op, c.args[i], current, enc);
          break;
        case Op::kDestroySession:
        case Op::kDestroyClientId:
        case Op::kReclaimComplete:
          enc.putU32(status);
          break;
        case Op::kBindConnToSession: {
          std::lock_guard lock(mu_);
          if (boot_ > 0 && (!sessionLive_ || c.bindSession != sessionId_)) {
            status = nfs4::kErrBadSession;
            enc.putU32(status);
            break;
          }
          enc.putU32(status);
          ++stats_.bindConn;
          enc.putFixedOpaque(sessionId_);
          enc.putU32(1);  // CDFS4_FORE
          enc.putBool(false);
          break;
        }
        default:
          status = kErrNotSupp;
          enc.putU32(status);
          break;
      }
      if (status != nfs4::kNfs4Ok) {
        compoundStatus = status;
        break;
      }
    }
    XdrBuilder head(64);
    head.enc().putU32(compoundStatus);
    head.enc().putString("");  // tag
    head.enc().putU32(count);
    results = concat({head.bytes(), body.bytes()});
  }
  if (script.rawResults && c.sequence) {
    std::lock_guard lock(mu_);
    busySlots_.erase(c.sequence->slot);
  }
  if (c.sequence) {
    std::lock_guard lock(mu_);
    const auto last = lastSequenceId_.find(c.sequence->slot);
    if (last != lastSequenceId_.end() && last->second == c.sequence->sequenceId) {
      replyCache_[c.sequence->slot] = results;
    }
  }
  return results;
}

void FakeNfs41Server::putFileAttrs(const Bytes& cur, const nfs4::Bitmap& request,
                                   xdr::XdrEncoder& enc) {
  std::lock_guard lock(mu_);
  const bool isFile = !cur.empty() && cur.front() == 'f';
  const auto it = isFile ? files_.find(std::string(cur.begin() + 1, cur.end())) : files_.end();
  std::uint32_t word = 0;  // all of these attributes are in the first word
  XdrBuilder values(64);
  const auto put = [&](std::uint32_t bit, std::uint64_t v, bool wide) {
    if (!request.test(bit) || cur.empty()) return;
    word |= 1U << bit;
    wide ? values.enc().putU64(v) : values.enc().putU32(static_cast<std::uint32_t>(v));
  };
  put(nfs4::attr::kType,
      static_cast<std::uint32_t>(isFile ? nfs4::FileType::kRegular : nfs4::FileType::kDirectory),
      false);
  if (it != files_.end()) put(nfs4::attr::kSize, it->second.size(), true);
  if (config_.maxRead > 0) put(nfs4::attr::kMaxRead, config_.maxRead, true);
  if (config_.maxWrite > 0) put(nfs4::attr::kMaxWrite, config_.maxWrite, true);
  enc.putU32(word == 0 ? 0 : 1);
  if (word != 0) enc.putU32(word);
  enc.putOpaque(values.bytes());
}

std::uint32_t FakeNfs41Server::answerFileOp(std::uint32_t op, const CompoundCall::FileArgs& a,
                                            Bytes& cur, xdr::XdrEncoder& enc) {
  std::lock_guard lock(mu_);
  const auto fail = [&enc](std::uint32_t status) {
    enc.putU32(status);
    return status;
  };
  const auto fileOf = [this](const Bytes& fh) -> Bytes* {
    if (fh.empty() || fh.front() != 'f') return nullptr;
    const auto it = files_.find(std::string(fh.begin() + 1, fh.end()));
    return it == files_.end() ? nullptr : &it->second;
  };
  switch (static_cast<Op>(op)) {
    case Op::kPutFh:
      if (a.fh != kRootFh && !fileOf(a.fh)) return fail(kErrStale);
      cur = a.fh;
      break;
    case Op::kOpen:
      if (a.claim != nfs4::kClaimNull) {  // CLAIM_PREVIOUS, CLAIM_FH: the current file
        if (!fileOf(cur)) return fail(kErrStale);
        break;
      }
      [[fallthrough]];
    case Op::kLookup:
      if (cur != kRootFh) return fail(nfs4::kErrNotDir);
      if (!files_.contains(a.name) && !(op == static_cast<std::uint32_t>(Op::kOpen) && a.create)) {
        return fail(nfs4::kErrNoEnt);
      }
      (void)files_[a.name];
      cur = fileHandle(a.name);
      break;
    case Op::kGetFh:
      if (cur.empty()) return fail(kErrNoFileHandle);
      break;
    case Op::kRead:
    case Op::kWrite:
      if (!fileOf(cur)) return fail(nfs4::kErrInval);
      if (a.stateBoot != boot_) return fail(kErrBadStateId);
      break;
    case Op::kClose:
      if (a.stateBoot != boot_) return fail(kErrBadStateId);
      break;
    default:
      break;  // COMMIT
  }
  enc.putU32(nfs4::kNfs4Ok);
  Bytes* f = fileOf(cur);
  switch (static_cast<Op>(op)) {
    case Op::kGetFh:
      enc.putOpaque(cur);
      break;
    case Op::kOpen:
      putStateId(enc, boot_);
      enc.putBool(true);  // change_info4: atomic, before, after
      enc.putU64(0);
      enc.putU64(0);
      enc.putU32(0);  // rflags
      enc.putU32(0);  // attrset: empty bitmap
      enc.putU32(nfs4::kOpenDelegateNone);
      break;
    case Op::kRead: {
      stats_.readCounts.push_back(a.count);
      const std::size_t at = std::min<std::size_t>(a.offset, f->size());
      std::size_t n = std::min<std::size_t>(a.count, f->size() - at);
      if (config_.shortRead > 0) n = std::min<std::size_t>(n, config_.shortRead);
      enc.putBool(at + n == f->size());  // eof
      enc.putOpaque(std::span<const std::uint8_t>(f->data() + at, n));
      break;
    }
    case Op::kWrite: {
      stats_.writeSizes.push_back(a.data.size());
      std::size_t n = a.data.size();
      if (config_.shortWrite > 0) n = std::min<std::size_t>(n, config_.shortWrite);
      if (f->size() < a.offset + n) f->resize(a.offset + n);
      std::copy_n(a.data.begin(), n, f->begin() + static_cast<std::ptrdiff_t>(a.offset));
      enc.putU32(static_cast<std::uint32_t>(n));
      enc.putU32(static_cast<std::uint32_t>(nfs4::StableHow::kUnstable));
      enc.putFixedOpaque(writeVerifier(boot_));
      break;
    }
    case Op::kCommit:
      enc.putFixedOpaque(writeVerifier(boot_));
      break;
    case Op::kClose:
      putStateId(enc, boot_);
      break;
    default:
      break;  // PUTFH, LOOKUP
  }
  return nfs4::kNfs4Ok;
}

}  // namespace nfsrdma::testpeer
