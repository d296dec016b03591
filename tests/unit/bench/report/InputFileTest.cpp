// The one way the benchmark's commands read what users and other programs
// wrote (bench/report/InputFile.h): `compare --results /dev/zero` read until
// the host ran out of memory, and a log on standard input had no bound at
// all. A path must be a regular file within its kind's size; standard input
// and logs are bounded while they are read.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "bench/report/InputFile.h"
#include "bench/report/Json.h"
#include "tests/unit/bench/ErrorOf.h"
#include "tests/unit/bench/ScratchDir.h"

namespace nfsrdma::bench {
namespace {

using testing::errorOf;
using testing::ScratchDir;

constexpr InputKind kSmall{"a test file", 1 << 20};

void writeText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(InputFile, ARegularFileWithinItsLimitIsReadWhole) {
  ScratchDir dir("input-file");
  const std::string p = dir.str() + "/ok";
  const std::string text(kSmall.maxBytes, 'x');
  writeText(p, text);
  EXPECT_EQ(readInputFile(p, kSmall), text);
}

TEST(InputFile, DevicesDirectoriesAndFifosAreRefusedBeforeAByteIsRead) {
  EXPECT_EQ(errorOf([] { readInputFile("/dev/zero", kSmall); }),
            "/dev/zero: a character device; expected a regular file, a test file of at most 1 MiB "
            "(1048576 bytes)");
  ScratchDir dir("input-kinds");
  EXPECT_EQ(
      errorOf([&] { readInputFile(dir.str(), kSmall); }),
      dir.str() +
          ": a directory; expected a regular file, a test file of at most 1 MiB (1048576 bytes)");
  const std::string fifo = dir.str() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // No writer: opening it must not wait for one.
  EXPECT_EQ(
      errorOf([&] { readInputFile(fifo, kSmall); }),
      fifo + ": a FIFO; expected a regular file, a test file of at most 1 MiB (1048576 bytes)");
  EXPECT_EQ(errorOf([&] { readInputFile(dir.str() + "/missing", kSmall); }),
            dir.str() + "/missing: cannot open: No such file or directory");
}

TEST(InputFile, AFileAboveTheLimitIsRefusedNamingItsSizeAndTheLimit) {
  ScratchDir dir("input-big");
  const std::string p = dir.str() + "/big";
  writeText(p, std::string(kSmall.maxBytes + 1, 'x'));
  EXPECT_EQ(errorOf([&] { readInputFile(p, kSmall); }),
            p + ": 1048577 bytes; expected a test file of at most 1 MiB (1048576 bytes)");
  // A sparse file is as large as it says: refused without reading it.
  const std::string sparse = dir.str() + "/sparse";
  writeText(sparse, "");
  ASSERT_EQ(::truncate(sparse.c_str(), off_t{1} << 40), 0);
  EXPECT_EQ(
      errorOf([&] { parseJsonFile(sparse); }),
      sparse + ": 1099511627776 bytes; expected a JSON file of at most 256 MiB (268435456 bytes)");
}

// Lines from a pipe, as standard input gives them.
InputLines linesOf(const std::string& text, std::size_t maxLine, std::uint64_t maxBytes) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe");
  EXPECT_EQ(::write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fds[1]);
  const int saved = ::dup(STDIN_FILENO);
  ::dup2(fds[0], STDIN_FILENO);
  ::close(fds[0]);
  InputLines lines("-", {"a test log", maxBytes}, maxLine);
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  return lines;
}

TEST(InputFile, LinesComeOneByOneWithTheLastOneUnterminated) {
  InputLines in = linesOf("one\n\nthree", 16, 1 << 20);
  std::string line;
  ASSERT_TRUE(in.next(line));
  EXPECT_EQ(line, "one");
  ASSERT_TRUE(in.next(line));
  EXPECT_EQ(line, "");
  ASSERT_TRUE(in.next(line));
  EXPECT_EQ(line, "three");
  EXPECT_EQ(in.lineNumber(), 3U);
  EXPECT_EQ(in.source(), "stdin");
  EXPECT_FALSE(in.next(line));
}

TEST(InputFile, ALineOrAStreamBeyondItsBoundIsAnErrorNamingTheLine) {
  InputLines longLine = linesOf("short\n" + std::string(17, 'x') + "\n", 16, 1 << 20);
  std::string line;
  ASSERT_TRUE(longLine.next(line));
  EXPECT_EQ(
      errorOf([&] { longLine.next(line); }),
      "stdin line 2: more than 16 bytes without a line end; expected a test log with lines of "
      "at most 16 bytes");
  // /dev/zero on standard input: no line end ever comes.
  const int saved = ::dup(STDIN_FILENO);
  const int zero = ::open("/dev/zero", O_RDONLY);
  ::dup2(zero, STDIN_FILENO);
  ::close(zero);
  InputLines zeros("-", {"a test log", 4 << 20}, 1 << 20);
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  EXPECT_EQ(errorOf([&] { zeros.next(line); }),
            "stdin line 1: more than 1048576 bytes without a line end; expected a test log with "
            "lines of at most 1 MiB (1048576 bytes)");
  std::string many;
  for (int i = 0; i < 100; ++i) many += "0123456789\n";
  InputLines tooMuch = linesOf(many, 16, 500);
  EXPECT_EQ(errorOf([&] {
              while (tooMuch.next(line)) {
              }
            }),
            "stdin: more than 500 bytes; expected a test log of at most 500 bytes");
}

}  // namespace
}  // namespace nfsrdma::bench
