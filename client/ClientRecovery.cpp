// What a Client does when its server restarted: the session (nfs4/Session.h)
// has made a new client ID and session, and before RECLAIM_COMPLETE asks for
// the open files back. Each is reclaimed with OPEN CLAIM_PREVIOUS in the
// grace period; a server with no grace to offer (NFS4ERR_NO_GRACE: ganesha
// configured graceless, or a grace period already over) gets an ordinary
// OPEN CLAIM_FH after RECLAIM_COMPLETE, as the Linux client's no-grace
// recovery does. A file neither restores keeps its old stateid, and its I/O
// then fails with the server's answer.
#include <string>
#include <thread>
#include <vector>

#include "client/ClientInternal.h"
#include "client/nfs4/BusyRetry.h"

namespace nfsrdma {
namespace {

using namespace client_detail;  // ClientInternal.h

// Reclaims the server refuses for want of a grace period; those files are
// opened again the ordinary way.
bool noGrace(const Error& e) {
  return e.code == nfs4::statusError(nfs4::kErrNoGrace) ||
         e.code == nfs4::statusError(nfs4::kErrReclaimBad);
}

std::string opens(std::uint64_t n) {
  return std::to_string(n) + (n == 1 ? " open" : " opens");
}

}  // namespace

void ClientImpl::remember(const std::shared_ptr<OpenFile::State>& st) {
  std::lock_guard lock(opensMu_);
  // Forget the closed and the dropped now and then, so the list stays as
  // long as what is open.
  if (openFiles_.size() >= 64 && openFiles_.size() % 64 == 0) (void)liveOpensLocked();
  openFiles_.push_back(st);
}

std::vector<std::shared_ptr<OpenFile::State>> ClientImpl::liveOpensLocked() {
  std::vector<std::shared_ptr<OpenFile::State>> live;
  std::vector<std::weak_ptr<OpenFile::State>> kept;
  for (auto& w : openFiles_) {
    auto st = w.lock();
    if (!st) continue;
    {
      std::lock_guard lock(st->mu);
      if (st->closed) continue;
    }
    kept.push_back(w);
    live.push_back(std::move(st));
  }
  openFiles_.swap(kept);
  return live;
}

std::vector<std::shared_ptr<OpenFile::State>> ClientImpl::liveOpens() {
  std::lock_guard lock(opensMu_);
  return liveOpensLocked();
}

Error ClientImpl::reopen(OpenFile::State& st, std::uint32_t claim,
                         const nfs4::NewSessionCall& call) {
  const std::string what =
      std::string(claim == nfs4::kClaimPrevious ? "reclaim " : "reopen ") + st.path;
  nfs4::OpenArgs args;
  args.clientId = session_->clientId();
  args.owner = {reinterpret_cast<const std::uint8_t*>(st.owner.data()), st.owner.size()};
  args.shareAccess = st.shareAccess;
  args.claim = claim;
  nfs4::OpenResult r;
  Error e = call(
      [&](CompoundEncoder& c) {
        c.putFh(st.fh);
        c.open(args);
      },
      [&](CompoundDecoder& d) -> Error {
        if (Error x = expectOk(d, Op::kPutFh, what)) return x;
        if (Error x = expectOk(d, Op::kOpen, what)) return x;
        r = d.open();
        return d.ok() ? Error{} : malformedReply(d, what);
      });
  if (e) return ledBy(e, what);
  // No request is on the wire while the session is set up, so nothing
  // reads the stateid as it changes.
  std::lock_guard lock(st.mu);
  st.stateId = r.stateId;
  st.delegationType = r.delegationType;
  st.delegation = r.delegationStateId;
  return {};
}

Error ClientImpl::reopenWhileBusy(OpenFile::State& st, std::uint32_t claim,
                                  const nfs4::NewSessionCall& call) {
  // A server still in grace for other clients holds ordinary opens
  // (NFS4ERR_GRACE), and a busy one may hold any OPEN, reclaims too
  // (NFS4ERR_DELAY: knfsd's file cache answers so when it cannot set the
  // file up yet). Either goes again, as the Linux client resends a reclaim
  // that got DELAY: given up, the file keeps the stateid of before the
  // restart, and its next WRITE fails with NFS4ERR_BAD_STATEID.
  nfs4::BusyRetry wait(options_.busyTimeout, nfs4::BusyRetry::Clock::now());
  for (;;) {
    Error e = reopen(st, claim, call);
    const auto pause =
        nfs4::BusyRetry::busy(e) ? wait.nextPause(nfs4::BusyRetry::Clock::now()) : std::nullopt;
    if (!pause) return e;
    std::this_thread::sleep_for(*pause);
  }
}

std::string ClientImpl::reclaimOpens(nfs4::ReclaimPhase phase, const nfs4::NewSessionCall& call) {
  std::uint64_t restored = 0;
  std::uint64_t deferred = 0;
  std::uint64_t failed = 0;
  std::string firstFailure;
  for (const auto& st : liveOpens()) {
    Error e;
    if (phase == nfs4::ReclaimPhase::kReclaim) {
      st->reclaimable = false;
      e = reopenWhileBusy(*st, nfs4::kClaimPrevious, call);
      if (noGrace(e)) {
        st->reclaimable = true;
        ++deferred;
        continue;
      }
    } else {
      if (!st->reclaimable) continue;
      st->reclaimable = false;
      e = reopenWhileBusy(*st, nfs4::kClaimFh, call);
    }
    if (e) {
      ++failed;
      if (firstFailure.empty()) firstFailure = e.message();
    } else {
      ++restored;
    }
  }
  {
    std::lock_guard lock(recoveryMu_);
    (phase == nfs4::ReclaimPhase::kReclaim ? recovery_.reclaimedOpens : recovery_.reopenedOpens) +=
        restored;
    recovery_.lostOpens += failed;
  }
  // Only what happened: "2 opens reclaimed", "1 open to reopen (...)".
  std::vector<std::string> parts;
  const bool reclaim = phase == nfs4::ReclaimPhase::kReclaim;
  if (restored > 0) parts.push_back(opens(restored) + (reclaim ? " reclaimed" : " reopened"));
  if (deferred > 0)
    parts.push_back(opens(deferred) + " to reopen (the server offered no grace period)");
  if (failed > 0) parts.push_back(opens(failed) + " lost (" + firstFailure + ")");
  if (reclaim && parts.empty()) parts.push_back("no files were open");
  std::string said;
  for (const auto& p : parts) said += (said.empty() ? "" : ", ") + p;
  return said;
}

}  // namespace nfsrdma
