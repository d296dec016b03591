// counters/CpuStat: /proc/stat's cpu lines and a thread's stat, on recorded
// lines (a name with spaces and ')', an old kernel's short cpu line) and on
// this host's own files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "counters/CpuStat.h"

namespace nfsrdma::counters {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream f(path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

TEST(CpuStat, ReadsTheHostAndEachCpu) {
  const auto cpus = parseProcStat(
      "cpu  4705 356 584 3699176 2335 0 31 0 0 0\n"
      "cpu0 1393 280 255 1850022 1186 0 20 0 0 0\n"
      "cpu1 3312 76 329 1849154 1149 0 11 0 0 0\n"
      "intr 1462898 20 9 0 0\n"
      "ctxt 4000000\n");
  ASSERT_EQ(cpus.size(), 3U);
  EXPECT_EQ(cpus[0].name, "cpu");
  EXPECT_EQ(cpus[0].softirq, 31U);
  EXPECT_EQ(cpus[0].total(), 4705U + 356 + 584 + 3699176 + 2335 + 31);
  EXPECT_EQ(cpus[0].busy(), 4705U + 356 + 584 + 31);
  EXPECT_EQ(cpus[2].user, 3312U);
}

TEST(CpuStat, AnOldKernelsShortLineHasNoIowait) {
  const auto cpus = parseProcStat("cpu 1 2 3 4\n");
  ASSERT_EQ(cpus.size(), 1U);
  EXPECT_FALSE(cpus[0].iowait.has_value());
  EXPECT_EQ(cpus[0].busy(), 6U);
  EXPECT_THROW(parseProcStat("cpu 1 2 3\n"), std::invalid_argument);
  EXPECT_THROW(parseProcStat("cpu0 1 2 x 4\n"), std::invalid_argument);
  // Nine values near 2^64 would wrap the total: no tick count is that large.
  EXPECT_THROW(parseProcStat("cpu 18446744073709551615 1 2 3\n"), std::invalid_argument);
}

TEST(CpuStat, ThisHostsProcStatHasTheHostAndEveryCpu) {
  const auto cpus = parseProcStat(readFile("/proc/stat"));
  ASSERT_GE(cpus.size(), 2U);
  EXPECT_EQ(cpus[0].name, "cpu");
  EXPECT_GT(cpus[0].total(), 0U);
  EXPECT_EQ(cpus.size(), static_cast<std::size_t>(::sysconf(_SC_NPROCESSORS_ONLN)) + 1);
}

TEST(CpuStat, AThreadsNameMayHoldSpacesAndParentheses) {
  const TaskStat t = parseTaskStat(
      "1234 (io (0) x) S 1 1234 1234 0 -1 4194368 100 0 0 0 25 13 0 0 20 0 5 0 12345 1000000 500 "
      "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n");
  EXPECT_EQ(t.comm, "io (0) x");
  EXPECT_EQ(t.state, 'S');
  EXPECT_EQ(t.utime, 25U);
  EXPECT_EQ(t.stime, 13U);
  EXPECT_EQ(t.processor, 1);
  EXPECT_THROW(parseTaskStat("1234 io S 1"), std::invalid_argument);
  EXPECT_THROW(parseTaskStat("1234 (x) S 1 2 3"), std::invalid_argument);
}

TEST(CpuStat, ThisThreadsOwnStatReads) {
  const std::string path = "/proc/self/task/" + std::to_string(::gettid()) + "/stat";
  const TaskStat t = parseTaskStat(readFile(path));
  EXPECT_EQ(t.state, 'R');  // it is reading its own stat
  ASSERT_TRUE(t.processor.has_value());
  EXPECT_GE(*t.processor, 0);
}

}  // namespace
}  // namespace nfsrdma::counters
