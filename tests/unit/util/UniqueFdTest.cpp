// UniqueFd (util/UniqueFd.h): the descriptor is closed exactly when its
// owner goes or lets go of it, and a move hands it over.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <utility>

#include "util/UniqueFd.h"

namespace nfsrdma {
namespace {

bool isOpen(int fd) {
  return ::fcntl(fd, F_GETFD) != -1;
}

int openNull() {
  return ::open("/dev/null", O_RDONLY | O_CLOEXEC);
}

TEST(UniqueFd, ClosesWhenItGoesOrIsReset) {
  int raw = openNull();
  ASSERT_GE(raw, 0);
  {
    const UniqueFd fd(raw);
    EXPECT_TRUE(isOpen(raw));
  }
  EXPECT_FALSE(isOpen(raw));

  UniqueFd fd(openNull());
  raw = fd.get();
  fd.reset();
  EXPECT_FALSE(isOpen(raw));
  EXPECT_FALSE(fd);
}

TEST(UniqueFd, MoveHandsOverAndReleaseGivesUp) {
  UniqueFd a(openNull());
  const int raw = a.get();
  UniqueFd b(std::move(a));
  EXPECT_EQ(b.get(), raw);
  EXPECT_EQ(a.get(), -1);  // NOLINT(bugprone-use-after-move): moved-from is empty
  UniqueFd c;
  c = std::move(b);
  EXPECT_TRUE(isOpen(raw));
  const int released = c.release();
  EXPECT_EQ(released, raw);
  { const UniqueFd gone(std::move(c)); }
  EXPECT_TRUE(isOpen(raw));  // released: no owner closed it
  ::close(raw);
}

}  // namespace
}  // namespace nfsrdma
