// What one open file owes the server a COMMIT for (RFC 8881 sections 18.32
// and 18.3): UNSTABLE WRITE replies since the last COMMIT that covered them,
// and the write verifier they carried. A verifier that changes between
// those replies and the COMMIT means the server restarted and may have lost
// the data.
//
// A COMMIT covers only the writes the server executed before it. A WRITE
// reply that arrives while a COMMIT is on the wire may belong to a WRITE the
// server ran after that COMMIT, so such replies stay owed: the next fsync or
// close sends another COMMIT instead of reporting data durable that was not.
// Not thread-safe; the open file's mutex guards it.
#pragma once

#include <cstdint>

#include "client/nfs4/Compound.h"

namespace nfsrdma::nfs4 {

class UnstableWrites {
 public:
  // The UNSTABLE WRITE replies counted when a COMMIT was sent.
  struct CommitTicket {
    std::uint64_t replies = 0;
  };
  enum class CommitOutcome {
    kDurable,  // the covered data is on stable storage
    kLost,     // the verifier changed: the server restarted, unstable data may be gone
  };

  // An UNSTABLE WRITE reply carrying this verifier.
  void onWriteReply(const Verifier& verifier);
  // Whether some UNSTABLE data is not yet covered by a successful COMMIT.
  bool owed() const { return replies_ != covered_; }
  // UNSTABLE WRITE replies so far (a COMMIT's ticket covers those up to its count).
  std::uint64_t replies() const { return replies_; }
  CommitTicket beginCommit() const { return CommitTicket{replies_}; }
  // The COMMIT sent at `ticket` returned `committed`. A lost outcome is
  // reported once: the writes it covered start over with the next reply.
  CommitOutcome endCommit(CommitTicket ticket, const Verifier& committed);

 private:
  std::uint64_t replies_ = 0;  // UNSTABLE WRITE replies so far
  std::uint64_t covered_ = 0;  // of those, the ones a COMMIT has answered for
  bool haveVerifier_ = false;
  Verifier verifier_{};           // of the first reply not yet covered
  bool verifierChanged_ = false;  // a later reply carried another verifier
};

}  // namespace nfsrdma::nfs4
