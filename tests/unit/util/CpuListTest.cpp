// parseCpuList: the kernel's CPU list text as sysfs and /proc/irq write it.
#include <gtest/gtest.h>

#include "util/CpuList.h"

namespace nfsrdma::util {
namespace {

TEST(CpuList, CpuListsAsSysfsWritesThem) {
  EXPECT_EQ(parseCpuList("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parseCpuList("5"), (std::vector<int>{5}));
  for (const char* bad : {"", "\n", "3-1", "a", "1,", "-2", "1-", "0-99999"}) {
    EXPECT_FALSE(parseCpuList(bad)) << bad;
  }
}

}  // namespace
}  // namespace nfsrdma::util
