// Replays the seed corpus of fuzz_kernel_stats through its harness without
// libFuzzer (GCC, and the sanitizer build): every seed is a file the kernel
// prints, so each must also parse, not only be handled.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "counters/CpuStat.h"
#include "counters/MountStats.h"
#include "counters/PoolStats.h"
#include "tests/fuzz/KernelStatsHarness.h"

namespace nfsrdma::fuzz {
namespace {

namespace fs = std::filesystem;

TEST(KernelStatsCorpus, EverySeedParsesAndKeepsTheHarnessInvariants) {
  const fs::path dir = fs::path(NFSRDMA_SOURCE_DIR) / "tests/fuzz/corpus/fuzz_kernel_stats";
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::ifstream f(entry.path(), std::ios::binary);
    const std::string text{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
    const std::vector<std::uint8_t> bytes(text.begin(), text.end());
    EXPECT_TRUE(runKernelStats(bytes)) << entry.path();
    const std::string name = entry.path().filename().string();
    if (name.rfind("mountstats", 0) == 0) {
      EXPECT_EQ(counters::parseMountStats(text).size(), 1U) << entry.path();
    } else if (name == "pool-stats") {
      EXPECT_EQ(counters::parsePoolStats(text).size(), 1U) << entry.path();
    } else if (name == "proc-stat") {
      EXPECT_EQ(counters::parseProcStat(text).size(), 2U) << entry.path();
    } else {
      EXPECT_EQ(counters::parseTaskStat(text).utime, 25U) << entry.path();
    }
    ++files;
  }
  EXPECT_EQ(files, 5U);
}

}  // namespace
}  // namespace nfsrdma::fuzz
