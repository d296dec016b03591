// The seed corpus of fuzz_rank_json, replayed without libFuzzer (also under
// the sanitizers in CI): each seed is refused with a reason or round-trips,
// and the seeds meant to be valid lines are accepted (so a change of the
// line's schema cannot leave the fuzzer starting from refusals only).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "bench/ranks/RankJson.h"
#include "tests/fuzz/RankJsonHarness.h"

namespace nfsrdma::bench {
namespace {

TEST(RankJsonFuzzCorpus, ReplaysCleanlyAndTheValidSeedsAreAccepted) {
  const std::filesystem::path dir =
      std::filesystem::path(NFSRDMA_SOURCE_DIR) / "tests/fuzz/corpus/fuzz_rank_json";
  std::size_t files = 0;
  std::size_t valid = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::vector<std::uint8_t> bytes(text.begin(), text.end());
    EXPECT_TRUE(fuzz::runRankJson(bytes)) << e.path();
    const std::string name = e.path().filename().string();
    if (name == "small-rank" || name == "failed-rank" || name == "with-version") {
      EXPECT_NO_THROW(rankFromJsonLine(text, name)) << e.path();
      ++valid;
    }
    ++files;
  }
  EXPECT_GE(files, 5U);
  EXPECT_EQ(valid, 3U);
}

}  // namespace
}  // namespace nfsrdma::bench
