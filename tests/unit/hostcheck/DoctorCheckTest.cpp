// DoctorCheck's text: a tag per line, the fix under it, the count at the end.
#include <gtest/gtest.h>

#include "hostcheck/DoctorCheck.h"

namespace nfsrdma::hostcheck {
namespace {

TEST(DoctorCheck, RendersEachLevelWithItsFixAndTheCounts) {
  CheckList list;
  list.pass("a", "fine");
  list.warn("b", "so-so", "do b");
  list.fail("c", "broken", "do c");
  EXPECT_EQ(renderDoctor(list.checks()),
            "PASS  a: fine\n"
            "WARN  b: so-so\n      fix: do b\n"
            "FAIL  c: broken\n      fix: do c\n"
            "3 checks: 1 FAIL, 1 WARN, 1 PASS\n");
  EXPECT_TRUE(anyFailed(list.checks()));
  CheckList warnOnly;
  warnOnly.warn("b", "so-so", "do b");
  EXPECT_FALSE(anyFailed(warnOnly.checks()));
}

}  // namespace
}  // namespace nfsrdma::hostcheck
