// errnoText/errnoMessage (util/ErrnoText.h): the C library's words for an
// errno, after the operation that failed.
#include <gtest/gtest.h>

#include <cerrno>

#include "util/ErrnoText.h"

namespace nfsrdma::util {
namespace {

TEST(ErrnoText, SaysTheCLibrarysWords) {
  EXPECT_EQ(errnoText(ENOENT), "No such file or directory");
  EXPECT_EQ(errnoText(ECONNREFUSED), "Connection refused");
  EXPECT_EQ(errnoText(ETIMEDOUT), "Connection timed out");
  EXPECT_EQ(errnoText(EACCES), "Permission denied");
  EXPECT_EQ(errnoText(ENOMEM), "Cannot allocate memory");
  EXPECT_EQ(errnoText(98765), "Unknown error 98765");
}

TEST(ErrnoText, MessageNamesTheOperationFirst) {
  EXPECT_EQ(errnoMessage("open /x", ENOENT), "open /x: No such file or directory");
  EXPECT_EQ(errnoMessage("", EIO), ": Input/output error");
}

TEST(ErrnoText, MessageReadsErrnoAtTheCallByDefault) {
  errno = EPIPE;
  EXPECT_EQ(errnoMessage("write stdout"), "write stdout: Broken pipe");
  errno = EEXIST;
  EXPECT_EQ(errnoMessage("mkdir /tmp"), "mkdir /tmp: File exists");
}

}  // namespace
}  // namespace nfsrdma::util
