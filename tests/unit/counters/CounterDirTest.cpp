// counters/CounterDir: a staged hw_counters directory (counters, a setting
// to skip, a file that holds no number), a missing directory, and this
// host's own loopback statistics.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "counters/CounterDir.h"

namespace nfsrdma::counters {
namespace {

namespace fs = std::filesystem;

class CounterDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nfsrdma-counterdir-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "subdir");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  fs::path dir_;
};

TEST_F(CounterDirTest, ReadsEachCounterFileAndSaysWhyAnotherIsNone) {
  write("rcvd_seq_err", "12\n");
  write("duplicate_request", "0\n");
  write("lifespan", "10\n");
  write("description", "soft-RoCE\n");
  const CounterDirRead r = readCounterDir(dir_, {"lifespan"});
  EXPECT_EQ(r.counters.get("rcvd_seq_err"), 12);
  EXPECT_EQ(r.counters.get("duplicate_request"), 0);
  EXPECT_FALSE(r.counters.get("lifespan").has_value());  // skipped: a setting
  EXPECT_FALSE(r.counters.get("subdir").has_value());
  ASSERT_EQ(r.counters.values.size(), 2U);
  EXPECT_EQ(r.counters.values[0].first, "duplicate_request");  // sorted by name
  bool described = false;
  for (const auto& [name, why] : r.unread) {
    if (name == "description") {
      EXPECT_EQ(why, "not a whole number: 'soft-RoCE'");
      described = true;
    }
  }
  EXPECT_TRUE(described);
  EXPECT_EQ(r.unread.size(), 1U);
}

TEST_F(CounterDirTest, AMissingDirectoryHasNoCounters) {
  const CounterDirRead r = readCounterDir(dir_ / "absent");
  EXPECT_TRUE(r.counters.values.empty());
  EXPECT_TRUE(r.unread.empty());
}

TEST(CounterDirHost, TheLoopbacksStatisticsReadAsCounters) {
  const CounterDirRead r = readCounterDir("/sys/class/net/lo/statistics");
  ASSERT_TRUE(r.counters.get("rx_packets").has_value());
  EXPECT_GE(*r.counters.get("rx_bytes"), 0);
  EXPECT_TRUE(r.unread.empty());
}

}  // namespace
}  // namespace nfsrdma::counters
