// libFuzzer entry point for the RPC-over-RDMA header decoder; see RdmaHeaderHarness.h.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "tests/fuzz/RdmaHeaderHarness.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (!nfsrdma::fuzz::runRdmaHeader(std::span<const std::uint8_t>(data, size))) std::abort();
  return 0;
}
