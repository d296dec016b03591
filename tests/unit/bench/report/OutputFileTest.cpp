// The one way the benchmark's commands write their report files
// (bench/report/OutputFile.h): `aggregate --html /dev/full` and `file --json
// /dev/full` exited 0 with the report lost (an ofstream checked before its
// buffer was flushed, or not at all).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "bench/report/OutputFile.h"
#include "tests/unit/FullStdout.h"
#include "tests/unit/bench/ErrorOf.h"
#include "tests/unit/bench/ScratchDir.h"

namespace nfsrdma::bench {
namespace {

using testing::errorOf;
using testing::ScratchDir;

TEST(OutputFile, AReportArrivesWholeAndReplacesWhatWasThere) {
  ScratchDir dir("output-file");
  const std::string p = dir.str() + "/r.json";
  std::ofstream(p) << std::string(100000, 'o');
  const std::string text(70000, 'x');  // more than one write of a pipe or a stdio buffer
  writeReportFile(p, text, "JSON");
  std::ifstream in(p, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), text);
}

TEST(OutputFile, AFullDeviceIsAnErrorNamingTheReportAndThePath) {
  EXPECT_EQ(errorOf([] { writeReportFile("/dev/full", "<html>", "HTML report"); }),
            "cannot write the HTML report to /dev/full: No space left on device");
  ScratchDir dir("output-missing");
  EXPECT_EQ(errorOf([&] { writeReportFile(dir.str() + "/no/r.json", "{}", "JSON"); }),
            "cannot write the JSON to " + dir.str() + "/no/r.json: No such file or directory");
}

TEST(OutputFile, DashIsStandardOutputAndAFullOneIsAnError) {
  std::string error;
  int leftError = -1;
  {
    const nfsrdma::testing::FullStdout full;
    error = errorOf([] { writeReportFile("-", "{}\n", "JSON"); });
    leftError = std::ferror(stdout) | std::fflush(stdout);
  }
  EXPECT_EQ(error, "cannot write the JSON to standard output: No space left on device");
  EXPECT_EQ(leftError, 0) << "said once: the command's end must not say it again";
  ::testing::internal::CaptureStdout();
  writeReportFile("-", "{}\n", "JSON");
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "{}\n");
}

}  // namespace
}  // namespace nfsrdma::bench
