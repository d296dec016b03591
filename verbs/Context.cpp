// Context: device open and queries.
#include "verbs/Context.h"

#include <cerrno>

#include "verbs/DeviceList.h"
#include "verbs/VerbsError.h"

namespace nfsrdma::verbs {

Context Context::open(ibv_device* device) {
  errno = 0;
  ibv_context* c = ibv_open_device(device);
  if (c == nullptr) {
    throwVerbError(std::string("ibv_open_device(") + ibv_get_device_name(device) + ")", errno);
  }
  return Context(c);
}

Context Context::open(std::string_view name) {
  const DeviceList list = DeviceList::open();
  return open(list.find(name));
}

std::string Context::name() const {
  return ibv_get_device_name(ctx_->device);
}

ibv_device_attr Context::queryDevice() const {
  ibv_device_attr attr{};
  if (const int rc = ibv_query_device(get(), &attr); rc != 0) {
    throwVerbError("ibv_query_device(" + name() + ")", rc);
  }
  return attr;
}

ibv_port_attr Context::queryPort(std::uint8_t port) const {
  ibv_port_attr attr{};
  if (const int rc = ibv_query_port(get(), port, &attr); rc != 0) {
    throwVerbError("ibv_query_port(" + name() + ", " + std::to_string(port) + ")", rc);
  }
  return attr;
}

ibv_gid Context::queryGid(std::uint8_t port, int index) const {
  ibv_gid gid{};
  if (const int rc = ibv_query_gid(get(), port, index, &gid); rc != 0) {
    throwVerbError("ibv_query_gid(" + name() + ", " + std::to_string(port) + ", " +
                       std::to_string(index) + ")",
                   rc > 0 ? rc : errno);
  }
  return gid;
}

}  // namespace nfsrdma::verbs
