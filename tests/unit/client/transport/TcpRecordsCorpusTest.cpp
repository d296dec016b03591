// Replays the seed corpus of fuzz_tcp_records through its harness without
// libFuzzer (GCC, and the sanitizer build): TCP record marking with direct
// placement against a peer writing whatever the seed says.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "tests/fuzz/TcpRecordsHarness.h"

namespace nfsrdma::fuzz {
namespace {

namespace fs = std::filesystem;

TEST(TcpRecordsCorpus, EverySeedKeepsTheTransportsInvariants) {
  const fs::path dir = fs::path(NFSRDMA_FUZZ_CORPUS_DIR) / "fuzz_tcp_records";
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  std::size_t files = 0;
  std::size_t placing = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream f(entry.path(), std::ios::binary);
    const std::vector<std::uint8_t> input{std::istreambuf_iterator<char>(f),
                                          std::istreambuf_iterator<char>()};
    TcpRecordsOutcome outcome;
    EXPECT_TRUE(runTcpRecords(input, &outcome)) << entry.path();
    EXPECT_LE(outcome.placed, outcome.placeable) << entry.path();
    // These seeds exist to offer direct placement a reply; a change of the
    // input layout that makes them stop would otherwise go unnoticed. (Whether
    // the transport places it depends on timing: a reply can arrive whole.)
    const std::string name = entry.path().filename().string();
    if (name == "placed-read" || name == "two-reads" || name == "filler-then-placed") {
      EXPECT_GT(outcome.placeable, 0U) << entry.path() << " offers no reply to direct placement";
      ++placing;
    }
    ++files;
  }
  EXPECT_GE(files, 7U);
  EXPECT_EQ(placing, 3U);
}

}  // namespace
}  // namespace nfsrdma::fuzz
