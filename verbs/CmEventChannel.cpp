// CmEventChannel / CmEvent: creation, bounded waits, event text.
#include "verbs/CmEventChannel.h"

#include <fcntl.h>
#include <poll.h>

#include <cerrno>

#include "verbs/DeviceList.h"
#include "verbs/VerbsError.h"

namespace nfsrdma::verbs {

std::span<const std::byte> CmEvent::privateData() const noexcept {
  const rdma_conn_param& c = event_->param.conn;
  if (c.private_data == nullptr) return {};
  return {static_cast<const std::byte*>(c.private_data), c.private_data_len};
}

std::string CmEvent::describe() const {
  return std::string(rdma_event_str(type())) + " (status " + std::to_string(status()) + ")";
}

CmEventChannel CmEventChannel::create() {
  // Without a device rdma_cm fails with an obscure errno; say what is wrong.
  (void)DeviceList::open();
  errno = 0;
  rdma_event_channel* c = rdma_create_event_channel();
  if (c == nullptr) throwVerbError("rdma_create_event_channel", errno);
  CmEventChannel channel(c);
  const int flags = ::fcntl(c->fd, F_GETFL);
  if (flags < 0 || ::fcntl(c->fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    throwVerbError("fcntl(rdma_cm channel, O_NONBLOCK)", errno);
  }
  return channel;
}

std::optional<CmEvent> CmEventChannel::wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {  // bounded by deadline
    rdma_cm_event* e = nullptr;
    if (rdma_get_cm_event(channel_.get(), &e) == 0) return CmEvent(e);
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      throwVerbError("rdma_get_cm_event", errno);
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd pfd{channel_->fd, POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(left.count())) < 0 && errno != EINTR) {
      throwVerbError("poll(rdma_cm channel)", errno);
    }
  }
}

}  // namespace nfsrdma::verbs
