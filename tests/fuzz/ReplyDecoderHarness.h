// The reply-decoder fuzz harness, shared by the libFuzzer target
// (fuzz_reply_decoder) and the unit test that replays its corpus with GCC.
//
// Input layout, so that one byte string reaches every op-result decoder:
//   byte 0            n = byte % (kMaxOps + 1): how many op results to decode
//   bytes 1..n        each selects an op (byte % opTable().size())
//   the rest          one RPC reply message (RFC 5531) whose results are a
//                     COMPOUND4res (RFC 8881): decodeReplyHeader, then a
//                     CompoundDecoder reading the n chosen results in order.
// Keeping the selectors outside the RPC message lets the fuzzer mutate the
// wire bytes and the decoder choice independently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "client/nfs4/Nfs4Constants.h"

namespace nfsrdma::fuzz {

inline constexpr std::size_t kMaxOps = 8;

// The ops the harness can ask CompoundDecoder for, in selector order.
std::span<const nfs4::Op> opTable();
// The selector byte for an op (its index in opTable()); throws for an op not in it.
std::uint8_t selectorOf(nfs4::Op op);

struct ReplyDecodeOutcome {
  bool headerOk = false;         // decodeReplyHeader returned no error
  bool compoundOk = false;       // the COMPOUND header decoded
  std::size_t opsRequested = 0;  // n from byte 0 (0 if the input is empty)
  std::size_t opsDecoded = 0;    // results whose op matched and whose body decoded
  bool malformed = false;        // the CompoundDecoder ended not ok()
  std::uint64_t digest = 0;      // folds decoded values, so nothing is optimized away
};

// Decodes one input as described above. Never throws on any input.
ReplyDecodeOutcome runReplyDecoder(std::span<const std::uint8_t> input);

// Builds a harness input: the selector prefix for ops followed by message.
std::vector<std::uint8_t> makeHarnessInput(std::span<const nfs4::Op> ops,
                                           std::span<const std::uint8_t> message);

}  // namespace nfsrdma::fuzz
