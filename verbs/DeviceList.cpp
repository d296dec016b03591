// DeviceList: libibverbs device enumeration with the no-device error path.
#include "verbs/DeviceList.h"

#include <cerrno>
#include <stdexcept>

#include "util/ErrnoText.h"
#include "verbs/VerbsError.h"

namespace nfsrdma::verbs {

DeviceList DeviceList::open() {
  errno = 0;
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr) {
    const int err = errno != 0 ? errno : ENODEV;
    throw NoDeviceError("libibverbs: " + util::errnoText(err));
  }
  DeviceList devices(list, n > 0 ? static_cast<std::size_t>(n) : 0);
  if (devices.size() == 0) throw NoDeviceError("libibverbs: the device list is empty");
  return devices;
}

std::string DeviceList::name(std::size_t i) const {
  return ibv_get_device_name((*this)[i]);
}

std::vector<std::string> DeviceList::names() const {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < size(); ++i) out.push_back(name(i));
  return out;
}

ibv_device* DeviceList::find(std::string_view wanted) const {
  std::string known;
  for (std::size_t i = 0; i < size(); ++i) {
    if (name(i) == wanted) return (*this)[i];
    known += (known.empty() ? "" : ", ") + name(i);
  }
  throw std::invalid_argument("RDMA device '" + std::string(wanted) +
                              "' not found (devices: " + known + ")");
}

}  // namespace nfsrdma::verbs
