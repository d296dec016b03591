// LinkServerState: what the RDMA and TCP listeners of one `link --server`
// share. The idle timeout is about the server as a whole: a TCP listener
// with no TCP clients must not stop a server that is busy with RDMA clients
// (and the other way round), so activity is tracked here, not per listener.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>

namespace nfsrdma::bench {

class LinkServerState {
 public:
  LinkServerState() { touch(); }

  // Set when a session marked last has ended, on idle timeout, or on a fatal
  // error of either listener; both listeners then stop.
  std::atomic<bool> finished{false};

  // A session starts/ends (either kind).
  void sessionStarted() {
    ++active_;
    touch();
  }
  void sessionEnded() {
    --active_;
    touch();
  }
  // True when no session runs and none ran for `idle`.
  bool idleFor(std::chrono::seconds idle) const {
    if (active_.load() > 0) return false;
    const auto last = std::chrono::steady_clock::time_point(
        std::chrono::steady_clock::duration(lastActivity_.load()));
    return std::chrono::steady_clock::now() - last > idle;
  }
  // What a listener does between clients: after `idle` with none, it says
  // so and finishes the server (both listeners).
  void finishWhenIdle(std::chrono::seconds idle) {
    if (!idleFor(idle)) return;
    std::fprintf(stderr, "nfsrdma-bench link: no client for %lld s, stopping\n",
                 static_cast<long long>(idle.count()));
    finished = true;
  }

 private:
  void touch() { lastActivity_ = std::chrono::steady_clock::now().time_since_epoch().count(); }
  std::atomic<int> active_{0};
  std::atomic<std::int64_t> lastActivity_{0};
};

// Marks a session active for its scope.
class LinkSessionScope {
 public:
  explicit LinkSessionScope(LinkServerState& s) : state_(s) { state_.sessionStarted(); }
  ~LinkSessionScope() { state_.sessionEnded(); }
  LinkSessionScope(const LinkSessionScope&) = delete;
  LinkSessionScope& operator=(const LinkSessionScope&) = delete;

 private:
  LinkServerState& state_;
};

}  // namespace nfsrdma::bench
