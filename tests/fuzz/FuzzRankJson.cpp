// libFuzzer entry point for one rank's result line; see RankJsonHarness.h.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "tests/fuzz/RankJsonHarness.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (!nfsrdma::fuzz::runRankJson(std::span<const std::uint8_t>(data, size))) std::abort();
  return 0;
}
