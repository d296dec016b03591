// libFuzzer entry point for TCP record marking and direct placement; see TcpRecordsHarness.h.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "tests/fuzz/TcpRecordsHarness.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (!nfsrdma::fuzz::runTcpRecords(std::span<const std::uint8_t>(data, size))) std::abort();
  return 0;
}
