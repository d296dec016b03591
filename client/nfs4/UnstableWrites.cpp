#include "client/nfs4/UnstableWrites.h"

namespace nfsrdma::nfs4 {

void UnstableWrites::onWriteReply(const Verifier& verifier) {
  ++replies_;
  if (!haveVerifier_) {
    haveVerifier_ = true;
    verifier_ = verifier;
  } else if (verifier != verifier_) {
    verifierChanged_ = true;
  }
}

UnstableWrites::CommitOutcome UnstableWrites::endCommit(CommitTicket ticket,
                                                        const Verifier& committed) {
  const bool lost = verifierChanged_ || (haveVerifier_ && committed != verifier_);
  if (ticket.replies > covered_) covered_ = ticket.replies;
  // Replies that came in after the COMMIT went out were compared with the
  // same baseline. It holds for them unless this COMMIT found it broken; then
  // those writes may have run under the old verifier too, and no later
  // COMMIT can vouch for them: they are reported lost as well.
  if (!owed()) {
    haveVerifier_ = false;
    verifierChanged_ = false;
  } else if (lost) {
    verifierChanged_ = true;
  }
  return lost ? CommitOutcome::kLost : CommitOutcome::kDurable;
}

}  // namespace nfsrdma::nfs4
