// DeviceList owns the array from ibv_get_device_list(). It is the gate every
// device-using entry point passes first: when libibverbs finds nothing (no
// hardware, no rdma_rxe, no uverbs module) it throws NoDeviceError with the
// libibverbs reason, instead of each caller failing later in its own words.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "verbs/Handle.h"

namespace nfsrdma::verbs {

class DeviceList {
 public:
  // Lists devices. Throws NoDeviceError when libibverbs fails or lists none.
  static DeviceList open();

  std::size_t size() const noexcept { return count_; }
  ibv_device* operator[](std::size_t i) const noexcept { return list_.get()[i]; }
  // Device name (kernel name, e.g. "rxe0").
  std::string name(std::size_t i) const;
  std::vector<std::string> names() const;
  // Device by name; throws std::invalid_argument listing the known names.
  ibv_device* find(std::string_view name) const;

 private:
  struct Traits {
    static int destroy(ibv_device** list) noexcept {
      ibv_free_device_list(list);
      return 0;
    }
    static constexpr const char* verb = "ibv_free_device_list";
  };
  DeviceList(ibv_device** list, std::size_t count) : list_(list), count_(count) {}

  detail::Handle<ibv_device*, Traits> list_;
  std::size_t count_ = 0;
};

}  // namespace nfsrdma::verbs
