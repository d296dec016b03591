// libFuzzer entry point for the RPC + COMPOUND reply decoders; the input
// format is described in ReplyDecoderHarness.h.
#include <cstddef>
#include <cstdint>
#include <span>

#include "tests/fuzz/ReplyDecoderHarness.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)nfsrdma::fuzz::runReplyDecoder(std::span<const std::uint8_t>(data, size));
  return 0;
}
