// CompletionChannel and CompletionQueue. The channel lets a thread sleep until
// a CQ has work (control traffic, servers idling); busy polling stays the data
// path. poll() is hot-path: it returns a PollResult and never throws. A failed
// completion is data, not an exception: on an error completion only wr_id and
// status are valid (the kernel's rule), so callers look at nothing else.
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <cstddef>
#include <span>
#include <system_error>

#include "verbs/Handle.h"

namespace nfsrdma::verbs {

class CompletionChannel {
 public:
  // Throws std::system_error naming ibv_create_comp_channel. The fd is made
  // non-blocking so waits can have a timeout.
  static CompletionChannel create(ibv_context* context);
  ibv_comp_channel* get() const noexcept { return channel_.get(); }

 private:
  struct Traits {
    static int destroy(ibv_comp_channel* c) noexcept { return ibv_destroy_comp_channel(c); }
    static constexpr const char* verb = "ibv_destroy_comp_channel";
  };
  explicit CompletionChannel(ibv_comp_channel* c) : channel_(c) {}
  detail::Handle<ibv_comp_channel, Traits> channel_;
};

// Result of one poll: how many entries were filled, or the poll error.
struct PollResult {
  std::size_t count = 0;
  std::error_code error;
};

class CompletionQueue {
 public:
  // Creates a CQ with at least `entries` entries, optionally bound to a
  // channel (which must outlive the CQ). Throws naming ibv_create_cq.
  static CompletionQueue create(ibv_context* context, int entries,
                                CompletionChannel* channel = nullptr, int vector = 0);

  ibv_cq* get() const noexcept { return cq_.get(); }

  // Polls up to out.size() completions. Never throws.
  PollResult poll(std::span<ibv_wc> out) noexcept {
    const int n = ibv_poll_cq(cq_.get(), static_cast<int>(out.size()), out.data());
    if (n < 0) return {0, std::error_code(-n > 0 ? -n : EIO, std::generic_category())};
    return {static_cast<std::size_t>(n), {}};
  }

  // Arms the CQ for the next completion event.
  std::error_code requestNotify(bool solicitedOnly = false) noexcept;

  // Waits (bounded by timeout) for a completion event on the bound channel,
  // acknowledges it and re-arms. Returns std::errc::timed_out on timeout,
  // and success also when a signal or a spurious wake-up ended the wait.
  // The caller polls afterwards: events only say "look now".
  std::error_code waitEvent(std::chrono::milliseconds timeout) noexcept;

  // The same for several CQs, each bound to a channel of its own: sleeps
  // until any of them has an event (or timeout), then acknowledges and
  // re-arms every CQ whose event arrived. An event left by a CQ already drained only costs a
  // spurious wake-up, so callers arm once and then just wait and poll.
  // At most kMaxWaitCqs of them.
  static constexpr std::size_t kMaxWaitCqs = 64;
  static std::error_code waitAnyEvent(std::span<CompletionQueue* const> cqs,
                                      std::chrono::milliseconds timeout) noexcept;

 private:
  struct Traits {
    static int destroy(ibv_cq* c) noexcept { return ibv_destroy_cq(c); }
    static constexpr const char* verb = "ibv_destroy_cq";
  };
  CompletionQueue(ibv_cq* c, ibv_comp_channel* ch) : cq_(c), channel_(ch) {}
  detail::Handle<ibv_cq, Traits> cq_;
  ibv_comp_channel* channel_ = nullptr;  // not owned
};

}  // namespace nfsrdma::verbs
