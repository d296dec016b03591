// The RPC-over-RDMA header fuzz harness (fuzz_rdma_header), shared with the
// unit test that replays its corpus: the input is one received message, as a
// receive completion would hand it to the RDMA transport. It is decoded, and
// when that succeeds, re-encoded and decoded again: the two decodings must
// agree (the codec round-trips whatever it accepts).
#pragma once

#include <cstdint>
#include <span>

namespace nfsrdma::fuzz {

// Returns false if a decoded header did not survive the re-encode round trip
// (the fuzz target aborts then); malformed input returns true.
bool runRdmaHeader(std::span<const std::uint8_t> input);

}  // namespace nfsrdma::fuzz
