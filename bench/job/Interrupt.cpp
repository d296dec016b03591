#include "bench/job/Interrupt.h"

#include <atomic>

namespace nfsrdma::bench {
namespace {

static_assert(std::atomic<int>::is_always_lock_free, "the signal handler stores into it");
std::atomic<int> gInterrupt{0};

}  // namespace

int interruptSignal() {
  return gInterrupt.load(std::memory_order_relaxed);
}
bool requestInterrupt(int signal) {
  int none = 0;
  return gInterrupt.compare_exchange_strong(none, signal, std::memory_order_relaxed);
}
void clearInterrupt() {
  gInterrupt.store(0, std::memory_order_relaxed);
}

namespace {

// Async-signal-safe throughout: a lock-free atomic, sigaction and raise.
extern "C" void onInterruptSignal(int signal) {
  if (requestInterrupt(signal)) return;  // the first: the run stops and cleans up
  // A second one, of either kind: the user will not wait for the cleanup.
  // SA_RESETHAND would reset only the signal that came first, so a SIGTERM
  // after a SIGINT would find this handler again; both go back to their
  // default action here, and the raised signal is delivered (it is blocked
  // while this handler runs) as soon as the handler returns.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigemptyset(&dfl.sa_mask);
  ::sigaction(SIGINT, &dfl, nullptr);
  ::sigaction(SIGTERM, &dfl, nullptr);
  ::raise(signal);
}

}  // namespace

Interrupted::Interrupted(int signal)
    : std::runtime_error("interrupted by " + signalName(signal)), signal_(signal) {}

std::string signalName(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return "signal " + std::to_string(signal);
}

InterruptHandlers::InterruptHandlers() {
  clearInterrupt();
  struct sigaction sa {};
  sa.sa_handler = onInterruptSignal;
  ::sigemptyset(&sa.sa_mask);
  // SA_RESTART: the signal must not fail an unrelated read or connect with EINTR.
  // No SA_RESETHAND: the handler itself restores the default action of both
  // signals on the second one.
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, &oldInt_);
  ::sigaction(SIGTERM, &sa, &oldTerm_);
}

InterruptHandlers::~InterruptHandlers() {
  ::sigaction(SIGINT, &oldInt_, nullptr);
  ::sigaction(SIGTERM, &oldTerm_, nullptr);
  clearInterrupt();
}

}  // namespace nfsrdma::bench
