// CmEventChannel owns an rdma_cm event channel; CmEvent owns one retrieved
// event and acknowledges it when destroyed. Acknowledging promptly matters:
// rdma_destroy_id blocks until every event of that id is acknowledged, so an
// event must never outlive the id it names. Waits are bounded (poll on the
// channel fd) so a missing peer becomes a timeout, not a hang.
#pragma once

#include <rdma/rdma_cma.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "verbs/Handle.h"

namespace nfsrdma::verbs {

class CmEvent {
 public:
  rdma_cm_event_type type() const noexcept { return event_->event; }
  int status() const noexcept { return event_->status; }
  rdma_cm_id* id() const noexcept { return event_->id; }
  rdma_cm_id* listenId() const noexcept { return event_->listen_id; }
  // Private data of CONNECT_REQUEST / ESTABLISHED / REJECTED; valid while
  // this event lives. Providers may pad it: parse only what you expect.
  std::span<const std::byte> privateData() const noexcept;
  // "RDMA_CM_EVENT_REJECTED (status 8)".
  std::string describe() const;

 private:
  friend class CmEventChannel;
  struct Ack {
    void operator()(rdma_cm_event* e) const noexcept {
      if (e != nullptr) rdma_ack_cm_event(e);
    }
  };
  explicit CmEvent(rdma_cm_event* e) : event_(e) {}
  std::unique_ptr<rdma_cm_event, Ack> event_;
};

class CmEventChannel {
 public:
  // Throws NoDeviceError when the host has no RDMA device (checked first, so
  // the message is the same everywhere), else std::system_error naming
  // rdma_create_event_channel.
  static CmEventChannel create();

  rdma_event_channel* get() const noexcept { return channel_.get(); }

  // Next event, or nullopt when none arrives within timeout. Throws
  // std::system_error naming rdma_get_cm_event on failure.
  std::optional<CmEvent> wait(std::chrono::milliseconds timeout);

 private:
  struct Traits {
    static int destroy(rdma_event_channel* c) noexcept {
      rdma_destroy_event_channel(c);
      return 0;
    }
    static constexpr const char* verb = "rdma_destroy_event_channel";
  };
  explicit CmEventChannel(rdma_event_channel* c) : channel_(c) {}
  detail::Handle<rdma_event_channel, Traits> channel_;
};

}  // namespace nfsrdma::verbs
