// How SIGINT and SIGTERM stop a file benchmark run: a flag every job polls
// before its next request (set by async-signal-safe handlers), the handlers'
// install and restore, and the exception a stopped run ends with. Apart from
// the run so that the job driver and the engines, which poll the flag, need
// nothing of the run's orchestration.
#pragma once

#include <signal.h>

#include <stdexcept>
#include <string>

namespace nfsrdma::bench {

// The signal (SIGINT, SIGTERM) that asked the run to stop, else 0: every
// job stops issuing at its next request and the run's cleanup follows
// (InterruptHandlers below installs the handlers that set it).
int interruptSignal();
// What the handlers do (async-signal-safe); tests call them directly.
// requestInterrupt keeps the first signal (a compare-exchange: a second one
// must not turn a SIGINT run into one that reports SIGTERM) and returns true
// when this one was the first.
bool requestInterrupt(int signal);
void clearInterrupt();

// Thrown by runFileBenchmark (FileRun.h) when SIGINT or SIGTERM stopped it (see
// InterruptHandlers): the command cleans up and exits 128 + signal.
class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int signal);
  int signal() const { return signal_; }

 private:
  int signal_;
};

// Installs SIGINT and SIGTERM handlers for its lifetime: the first signal
// sets interruptSignal() (jobs stop at their next request, the command's
// cleanup runs); a second one, of either kind, kills the process with the
// default action, for a user who will not wait. Restores the previous
// handlers and clears the flag at the end.
class InterruptHandlers {
 public:
  InterruptHandlers();
  ~InterruptHandlers();
  InterruptHandlers(const InterruptHandlers&) = delete;
  InterruptHandlers& operator=(const InterruptHandlers&) = delete;

 private:
  struct sigaction oldInt_ {};
  struct sigaction oldTerm_ {};
};
// "SIGINT", "SIGTERM", else "signal N".
std::string signalName(int signal);

}  // namespace nfsrdma::bench
