// CpuList: the kernel's CPU list text ("0-3,8,10-11", sysfs cpulist files
// and /proc/irq/N/smp_affinity_list), parsed.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace nfsrdma::util {

// "0-3,8,10-11" (sysfs cpulist) -> {0,1,2,3,8,10,11}; nullopt when malformed.
std::optional<std::vector<int>> parseCpuList(std::string_view text);

}  // namespace nfsrdma::util
