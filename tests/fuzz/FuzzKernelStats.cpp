// libFuzzer entry point for the kernel's counter files; see KernelStatsHarness.h.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "tests/fuzz/KernelStatsHarness.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (!nfsrdma::fuzz::runKernelStats(std::span<const std::uint8_t>(data, size))) std::abort();
  return 0;
}
