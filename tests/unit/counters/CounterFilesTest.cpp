// counters/CounterFiles: a directory's counters opened once and read again
// as they change (what sysfs and procfs do at each pread at offset 0),
// kept to the names asked for; a file that stops holding a number left
// out, a missing directory empty; and this host's loopback counting.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "counters/CounterFiles.h"

namespace nfsrdma::counters {
namespace {

namespace fs = std::filesystem;

class CounterFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nfsrdma-counterfiles-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // Rewrites the file in place (same inode), as the kernel's value changes.
  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::in | std::ios::out | std::ios::trunc) << text;
  }
  fs::path dir_;
};

TEST_F(CounterFilesTest, ReadsTheSameOpenFilesAgainAsTheyChange) {
  std::ofstream(dir_ / "rcvd_seq_err") << "1\n";
  std::ofstream(dir_ / "lifespan") << "10\n";
  const CounterFiles files(dir_, [](std::string_view n) { return n != "lifespan"; });
  EXPECT_EQ(files.read().get("rcvd_seq_err"), 1);
  EXPECT_FALSE(files.read().get("lifespan"));
  write("rcvd_seq_err", "42\n");
  EXPECT_EQ(files.read().get("rcvd_seq_err"), 42);
  write("rcvd_seq_err", "gone\n");
  EXPECT_FALSE(files.read().get("rcvd_seq_err"));  // not a number now: absent, not zero
}

TEST_F(CounterFilesTest, AMissingDirectoryOpensNothing) {
  const CounterFiles files(dir_ / "none");
  EXPECT_TRUE(files.empty());
  EXPECT_TRUE(files.read().values.empty());
}

TEST_F(CounterFilesTest, ThisHostsLoopbackCountsWhileItsFilesStayOpen) {
  const CounterFiles lo("/sys/class/net/lo/statistics",
                        [](std::string_view n) { return n == "tx_packets"; });
  if (lo.empty()) GTEST_SKIP() << "no /sys/class/net/lo/statistics here";
  const auto before = lo.read().get("tx_packets");
  ASSERT_TRUE(before);
  // Datagrams to the discard port of 127.0.0.1: each is a packet on lo.
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int i = 0; i < 20 && lo.read().get("tx_packets") == before; ++i) {
    ::sendto(fd, "x", 1, 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
  }
  ::close(fd);
  EXPECT_GT(*lo.read().get("tx_packets"), *before);
}

}  // namespace
}  // namespace nfsrdma::counters
