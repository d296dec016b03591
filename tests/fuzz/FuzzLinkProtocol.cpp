// libFuzzer entry point for the link benchmark's protocol; see LinkProtocolHarness.h.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "tests/fuzz/LinkProtocolHarness.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (!nfsrdma::fuzz::runLinkProtocol(std::span<const std::uint8_t>(data, size))) std::abort();
  return 0;
}
