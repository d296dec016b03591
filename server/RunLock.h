// RunLock: one apply or rollback at a time. Each reads the undo record and
// the files it changes, then replaces them, so two at once would lose each
// other's undo steps or back up each other's output as the state before. The
// lock is flock(2) on the state directory itself (/var/lib/nfsrdma), so
// taking it writes nothing but, with `create`, the directory.
#pragma once

#include "server/HostPaths.h"
#include "util/UniqueFd.h"

namespace nfsrdma::server {

class RunLock {
 public:
  // Takes the lock, or throws std::runtime_error naming the directory (when
  // another apply or rollback holds it, or flock fails). Without `create`
  // and without the directory (never applied) it is not held.
  RunLock(const HostPaths& paths, bool create);
  bool held() const { return static_cast<bool>(fd_); }  // closing the fd releases the lock

 private:
  UniqueFd fd_;
};

}  // namespace nfsrdma::server
