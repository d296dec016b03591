#include "client/transport/IoLoop.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "client/base/Error.h"
#include "client/transport/Transport.h"

namespace nfsrdma::transport {
namespace {

// Coalescing: only with this many calls in flight on the loop, aiming to
// collect a quarter of them per wakeup, never waiting longer than the maximum.
constexpr std::size_t kCoalesceMinInFlight = 16;
constexpr std::int64_t kMaxCoalesceMicros = 1000;
constexpr std::int64_t kMinCoalesceMicros = 50;

}  // namespace

thread_local std::uint64_t IoLoop::tlsRound_ = 0;

IoLoop::IoLoop() : wakeFd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (!wakeFd_) throw NfsException(errnoError(errno, "eventfd for an I/O loop"));
  nextTick_ =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(Transport::kTickIntervalMs);
  thread_ = std::thread([this] { run(); });
}

IoLoop::~IoLoop() {
  stop_.store(true);
  wake();
  if (thread_.joinable()) {
    if (onThread()) {
      thread_.detach();  // the last owner let go from a callback; run() returns at once
    } else {
      thread_.join();
    }
  }
}

void IoLoop::wake() {
  std::uint64_t one = 1;
  (void)!::write(wakeFd_.get(), &one, sizeof one);
}

void IoLoop::add(Member& m) {
  {
    std::lock_guard lock(commandMu_);
    commands_.push_back({&m, true});
    commandsPending_.store(true);
  }
  wake();
}

void IoLoop::remove(Member& m) {
  if (onThread()) {
    drop(&m);
    return;
  }
  std::unique_lock lock(commandMu_);
  commands_.push_back({&m, false});
  commandsPending_.store(true);
  const std::uint64_t round = appliedRounds_;
  wake();
  // Applied between two rounds: the loop is not inside m then. A loop that
  // stopped applies nothing more, and touches nothing more either.
  applied_.wait(lock, [&] { return appliedRounds_ != round || stop_.load(); });
}

void IoLoop::place(std::optional<int> node, std::string what) {
  {
    std::lock_guard lock(commandMu_);
    placeRequest_ = PlaceRequest{node, std::move(what)};
    commandsPending_.store(true);
  }
  wake();
}

NumaPlacement IoLoop::placement() const {
  std::lock_guard lock(placementMu_);
  return placement_;
}

void IoLoop::drop(Member* m) {
  members_.erase(std::remove(members_.begin(), members_.end(), m), members_.end());
  std::replace(serving_.begin(), serving_.end(), m, static_cast<Member*>(nullptr));
  std::replace(flushing_.begin(), flushing_.end(), m, static_cast<Member*>(nullptr));
}

void IoLoop::applyCommands() {
  if (!commandsPending_.load()) return;
  std::lock_guard lock(commandMu_);
  for (const Command& c : commands_) {
    if (c.add) {
      members_.push_back(c.member);
    } else {
      drop(c.member);
    }
  }
  commands_.clear();
  if (placeRequest_) {
    NumaPlacement p = placeThisThread(placeRequest_->node, placeRequest_->what);
    placeRequest_.reset();
    std::lock_guard placed(placementMu_);
    placement_ = std::move(p);
  }
  commandsPending_.store(false);
  ++appliedRounds_;
  applied_.notify_all();
}

void IoLoop::run() {
  threadId_.store(std::this_thread::get_id());
  std::vector<pollfd> fds;
  while (!stop_.load()) {
    applyCommands();
    fds.assign(1, pollfd{wakeFd_.get(), POLLIN, 0});
    for (Member* m : members_) fds.push_back(pollfd{m->pollFd(), m->pollEvents(), 0});
    const auto waitMs = std::chrono::duration_cast<std::chrono::milliseconds>(
                            nextTick_ - std::chrono::steady_clock::now())
                            .count();
    const int rc = ::poll(fds.data(), fds.size(), waitMs < 0 ? 0 : static_cast<int>(waitMs) + 1);
    if (rc > 0) {
      if (fds[0].revents & POLLIN) {
        std::uint64_t v;
        (void)!::read(wakeFd_.get(), &v, sizeof v);
      }
      if (stop_.load()) break;
      serve(fds);
      if (const auto delay = pacing(); delay.count() > 0) {
        // Sleep on the wake fd only: a send from another thread, a member
        // joining or leaving, or the loop stopping still wakes it.
        pollfd wakeOnly{wakeFd_.get(), POLLIN, 0};
        ::poll(&wakeOnly, 1, 0);  // drop a stale wake first
        struct timespec ts {
          0, static_cast<long>(delay.count()) * 1000
        };
        ::ppoll(&wakeOnly, 1, &ts, nullptr);
      }
    }
    if (std::chrono::steady_clock::now() >= nextTick_) tick();
  }
  std::lock_guard lock(commandMu_);
  applied_.notify_all();  // a remove() waiting for a round that will not come
}

void IoLoop::serve(const std::vector<pollfd>& fds) {
  // fds[i + 1] is members_[i] of this round; a member removed by a callback
  // (its owner closed it) is skipped from then on.
  serving_ = members_;
  ++tlsRound_;
  inRound_ = true;
  for (std::size_t i = 0; i < serving_.size(); ++i) {
    const short ev = fds[i + 1].revents;
    if (ev != 0 && serving_[i] != nullptr) serving_[i]->onEvents(ev);
  }
  inRound_ = false;
  serving_.clear();
  // Sends corked during the round leave now, one per member; a member
  // removed by a callback in between is skipped.
  for (std::size_t i = 0; i < flushing_.size(); ++i) {
    if (flushing_[i] != nullptr) flushing_[i]->onRoundEnd();
  }
  flushing_.clear();
}

void IoLoop::tick() {
  serving_ = members_;
  for (Member* m : serving_) {
    if (m != nullptr) m->onTick();
  }
  serving_.clear();
  nextTick_ =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(Transport::kTickIntervalMs);
}

std::chrono::microseconds IoLoop::pacing() {
  std::size_t replies = 0;
  std::size_t inFlight = 0;
  std::size_t busy = 0;  // members with calls in flight
  bool large = false;
  for (Member* m : members_) {
    replies += m->takeReplies();
    const std::size_t n = m->callsInFlight();
    inFlight += n;
    busy += n > 0 ? 1 : 0;
    large = large || m->inLargeRecord();
  }
  const auto now = std::chrono::steady_clock::now();
  if (replies > 0 && lastBatch_.time_since_epoch().count() != 0) {
    const double gap = std::chrono::duration<double, std::micro>(now - lastBatch_).count() /
                       static_cast<double>(replies);
    replyGapMicros_ = replyGapMicros_ == 0 ? gap : 0.8 * replyGapMicros_ + 0.2 * gap;
  }
  if (replies > 0) lastBatch_ = now;
  if (!coalesce_.load() || inFlight < kCoalesceMinInFlight || large)
    return std::chrono::microseconds(0);
  // A quarter of the calls in flight per wakeup; over several connections
  // half, since each connection with replies in a wakeup costs a receive
  // of its own (what a trunk would otherwise pay per operation; its calls
  // leave in one send per wakeup: Session::pickForRound).
  const double share = busy > 1 ? 0.5 : 0.25;
  const auto want =
      static_cast<std::int64_t>(replyGapMicros_ * static_cast<double>(inFlight) * share);
  if (want < kMinCoalesceMicros) return std::chrono::microseconds(0);
  return std::chrono::microseconds(std::min(want, kMaxCoalesceMicros));
}

}  // namespace nfsrdma::transport
