// Context owns an opened device (ibv_open_device) and answers the queries the
// rest of the layer needs (device, port, GID) as values, throwing a message
// that names the verb. Connections made through rdma_cm do not use it: there
// librdmacm owns the context (rdma_cm_id::verbs).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "verbs/Handle.h"

namespace nfsrdma::verbs {

class Context {
 public:
  // Opens a listed device. Throws std::system_error naming ibv_open_device.
  static Context open(ibv_device* device);
  // Opens a device by name; throws NoDeviceError when there is none at all.
  static Context open(std::string_view name);

  ibv_context* get() const noexcept { return ctx_.get(); }
  std::string name() const;
  ibv_device_attr queryDevice() const;
  ibv_port_attr queryPort(std::uint8_t port) const;
  ibv_gid queryGid(std::uint8_t port, int index) const;

 private:
  struct Traits {
    static int destroy(ibv_context* c) noexcept { return ibv_close_device(c); }
    static constexpr const char* verb = "ibv_close_device";
  };
  explicit Context(ibv_context* c) : ctx_(c) {}
  detail::Handle<ibv_context, Traits> ctx_;
};

}  // namespace nfsrdma::verbs
