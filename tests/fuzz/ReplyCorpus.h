// Seed replies for fuzz_reply_decoder: small valid and near-valid RPC replies
// carrying COMPOUND results, each with the outcome the harness must report.
// GenerateReplyCorpus writes them to tests/fuzz/corpus/fuzz_reply_decoder/;
// ReplyDecoderCorpusTest checks the committed files still equal these bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nfsrdma::fuzz {

struct ReplySeed {
  std::string name;                 // file name in the corpus directory
  std::vector<std::uint8_t> input;  // harness input (selectors + RPC message)
  bool headerOk = true;             // expected ReplyDecodeOutcome fields
  std::size_t opsDecoded = 0;
  bool malformed = false;
};

std::vector<ReplySeed> replySeeds();

}  // namespace nfsrdma::fuzz
