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
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream f(entry.path(), std::ios::binary);
    const std::vector<std::uint8_t> input{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
    EXPECT_TRUE(runTcpRecords(input)) << entry.path();
    ++files;
  }
  EXPECT_GE(files, 7U);
}

}  // namespace
}  // namespace nfsrdma::fuzz
