// Standard output on /dev/full for the life of the object, for tests of
// output that cannot be written (every write fails with ENOSPC). What stdio
// still holds is dropped when it is restored, and the error flags of stdout
// and std::cout are cleared.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <stdexcept>

namespace nfsrdma::testing {

class FullStdout {
 public:
  FullStdout() {
    std::fflush(stdout);
    saved_ = ::dup(STDOUT_FILENO);
    const int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
    if (saved_ < 0 || full < 0 || ::dup2(full, STDOUT_FILENO) < 0)
      throw std::runtime_error("cannot put stdout on /dev/full");
    ::close(full);
  }
  ~FullStdout() {
    std::fflush(stdout);  // fails: what it held is lost, as it would be
    std::clearerr(stdout);
    std::cout.clear();
    ::dup2(saved_, STDOUT_FILENO);
    ::close(saved_);
  }
  FullStdout(const FullStdout&) = delete;
  FullStdout& operator=(const FullStdout&) = delete;

 private:
  int saved_ = -1;
};

}  // namespace nfsrdma::testing
