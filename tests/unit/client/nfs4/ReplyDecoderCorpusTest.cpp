// Replays the committed seed corpus of fuzz_reply_decoder through its harness
// without libFuzzer (so it runs with GCC and under the sanitizer build), and
// checks the corpus still equals what ReplyCorpus.cpp generates and that the
// seeds, together, reach every op-result decoder.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "client/nfs4/Compound.h"
#include "tests/fuzz/ReplyCorpus.h"
#include "tests/fuzz/ReplyDecoderHarness.h"

namespace nfsrdma::fuzz {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(NFSRDMA_FUZZ_CORPUS_DIR) / "fuzz_reply_decoder";

std::vector<std::uint8_t> readFile(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

TEST(FuzzCorpus, ReplaysEveryFileWithoutCrashing) {
  ASSERT_TRUE(fs::is_directory(kCorpus)) << kCorpus;
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(kCorpus)) {
    if (!entry.is_regular_file()) continue;
    const auto input = readFile(entry.path());
    const ReplyDecodeOutcome out = runReplyDecoder(input);
    EXPECT_LE(out.opsDecoded, out.opsRequested) << entry.path();
    ++files;
  }
  EXPECT_GE(files, 10U);
}

TEST(FuzzCorpus, CommittedSeedsEqualTheGeneratorAndDecodeAsExpected) {
  for (const ReplySeed& seed : replySeeds()) {
    SCOPED_TRACE(seed.name);
    const fs::path file = kCorpus / seed.name;
    ASSERT_TRUE(fs::exists(file)) << "regenerate with nfsrdma-gen-reply-corpus " << kCorpus;
    EXPECT_EQ(readFile(file), seed.input) << "stale seed; regenerate with nfsrdma-gen-reply-corpus";
    const ReplyDecodeOutcome out = runReplyDecoder(seed.input);
    EXPECT_EQ(out.headerOk, seed.headerOk);
    EXPECT_EQ(out.opsDecoded, seed.opsDecoded);
    EXPECT_EQ(out.malformed, seed.malformed);
  }
}

TEST(FuzzCorpus, ValidSeedsReachEveryOpDecoder) {
  std::set<nfs4::Op> reached;
  for (const ReplySeed& seed : replySeeds()) {
    const ReplyDecodeOutcome out = runReplyDecoder(seed.input);
    for (std::size_t i = 0; i < out.opsDecoded; ++i) reached.insert(opTable()[seed.input[1 + i]]);
  }
  for (nfs4::Op op : opTable())
    EXPECT_TRUE(reached.count(op)) << nfs4::opName(op) << " never decoded";
}

TEST(FuzzHarness, ShortAndEmptyInputs) {
  EXPECT_EQ(runReplyDecoder({}).opsRequested, 0U);
  const std::vector<std::uint8_t> onlySelectors = {3, 0, 1};
  const ReplyDecodeOutcome out = runReplyDecoder(onlySelectors);
  EXPECT_EQ(out.opsRequested, 3U);
  EXPECT_FALSE(out.headerOk);
  // Byte 0 wraps modulo kMaxOps + 1: 9 asks for no op at all.
  EXPECT_EQ(runReplyDecoder(std::vector<std::uint8_t>{9}).opsRequested, 0U);
}

}  // namespace
}  // namespace nfsrdma::fuzz
