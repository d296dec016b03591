// CompletionChannel / CompletionQueue: creation and event waits with timeouts.
#include "verbs/CompletionQueue.h"

#include <fcntl.h>
#include <poll.h>

#include <array>
#include <cerrno>

#include "verbs/VerbsError.h"

namespace nfsrdma::verbs {

CompletionChannel CompletionChannel::create(ibv_context* context) {
  errno = 0;
  ibv_comp_channel* c = ibv_create_comp_channel(context);
  if (c == nullptr) throwVerbError("ibv_create_comp_channel", errno);
  CompletionChannel channel(c);
  const int flags = ::fcntl(c->fd, F_GETFL);
  if (flags < 0 || ::fcntl(c->fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    throwVerbError("fcntl(completion channel, O_NONBLOCK)", errno);
  }
  return channel;
}

CompletionQueue CompletionQueue::create(ibv_context* context, int entries,
                                        CompletionChannel* channel, int vector) {
  errno = 0;
  ibv_comp_channel* ch = channel != nullptr ? channel->get() : nullptr;
  ibv_cq* c = ibv_create_cq(context, entries, nullptr, ch, vector);
  if (c == nullptr) throwVerbError("ibv_create_cq(" + std::to_string(entries) + " entries)", errno);
  return CompletionQueue(c, ch);
}

std::error_code CompletionQueue::requestNotify(bool solicitedOnly) noexcept {
  const int rc = ibv_req_notify_cq(cq_.get(), solicitedOnly ? 1 : 0);
  return rc == 0 ? std::error_code{} : std::error_code(rc > 0 ? rc : EIO, std::generic_category());
}

std::error_code CompletionQueue::waitEvent(std::chrono::milliseconds timeout) noexcept {
  CompletionQueue* const self = this;
  return waitAnyEvent(std::span(&self, 1), timeout);
}

std::error_code CompletionQueue::waitAnyEvent(std::span<CompletionQueue* const> cqs,
                                              std::chrono::milliseconds timeout) noexcept {
  std::array<pollfd, kMaxWaitCqs> fds{};
  if (cqs.empty() || cqs.size() > fds.size())
    return std::make_error_code(std::errc::invalid_argument);
  for (std::size_t i = 0; i < cqs.size(); ++i) {
    if (cqs[i]->channel_ == nullptr) return std::make_error_code(std::errc::invalid_argument);
    fds[i] = {cqs[i]->channel_->fd, POLLIN, 0};
  }
  const int rc = ::poll(fds.data(), cqs.size(), static_cast<int>(timeout.count()));
  if (rc == 0) return std::make_error_code(std::errc::timed_out);
  if (rc < 0)
    return errno == EINTR ? std::error_code{} : std::error_code(errno, std::generic_category());
  for (std::size_t i = 0; i < cqs.size(); ++i) {
    if (fds[i].revents == 0) continue;
    ibv_cq* cq = nullptr;
    void* cqContext = nullptr;
    if (ibv_get_cq_event(cqs[i]->channel_, &cq, &cqContext) != 0) {
      if (errno == EAGAIN) continue;  // readable, yet no event: nothing to acknowledge
      return {errno == 0 ? EIO : errno, std::generic_category()};
    }
    ibv_ack_cq_events(cq, 1);
    // One channel per CQ: the event is this CQ's, and re-arming it is what
    // the next wait relies on.
    if (cq != cqs[i]->get()) return std::make_error_code(std::errc::invalid_argument);
    if (std::error_code ec = cqs[i]->requestNotify()) return ec;
  }
  return {};
}

}  // namespace nfsrdma::verbs
