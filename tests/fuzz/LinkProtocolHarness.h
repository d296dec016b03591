// The link benchmark's protocol fuzz harness (fuzz_link_protocol), shared with
// the unit test that replays its corpus. The first input byte picks the
// message a peer could send (connect data, accept data, a control SEND, or one
// of the TCP session's word records); the rest is that message. A decoder must
// either refuse it with LinkProtocolError or return a value inside the bounds
// the server relies on, which encodes back to the same bytes.
#pragma once

#include <cstdint>
#include <span>

namespace nfsrdma::fuzz {

// Returns false if a decoder accepted something out of bounds, did not round
// trip, or failed with anything but LinkProtocolError (the fuzz target aborts).
bool runLinkProtocol(std::span<const std::uint8_t> input);

}  // namespace nfsrdma::fuzz
