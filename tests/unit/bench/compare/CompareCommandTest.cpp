// `nfsrdma-bench compare` re-rendering saved results in this process: what
// goes to stdout with `-`. The tests came from reviews that found a bug;
// each fails without its fix.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "bench/BenchCommands.h"
#include "bench/compare/CompareMatrix.h"
#include "bench/report/Json.h"
#include "tests/unit/bench/CommandCapture.h"
#include "tests/unit/bench/FieldReport.h"
#include "tests/unit/bench/ScratchDir.h"

namespace nfsrdma::bench {
namespace {

namespace fs = std::filesystem;

using testing::CommandResult;
using testing::runCommand;
using testing::ScratchDir;

// `compare --json -` writes the JSON to stdout, and no file named '-'.
TEST(CompareCommand, CompareJsonDashIsStdout) {
  ScratchDir dir("review-dash");
  const std::string saved = (dir.path() / "saved.json").string();
  std::ofstream(saved) << compareToJson(testing::fieldNotesReport());
  const fs::path cwd = fs::current_path();
  fs::current_path(dir.path());
  const CommandResult r =
      runCommand(runCompareCommand, {"compare", "--results", saved, "--json", "-"});
  const bool dashFile = fs::exists(dir.path() / "-");
  const bool htmlFile = fs::exists(dir.path() / "nfsrdma-bench-compare.html");
  fs::current_path(cwd);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_FALSE(dashFile);
  EXPECT_FALSE(htmlFile);  // re-rendering writes only what was asked for
  EXPECT_EQ(compareFromJson(parseJson(r.out)).cells.size(),
            testing::fieldNotesReport().cells.size());
  const CommandResult both =
      runCommand(runCompareCommand, {"compare", "--results", saved, "--json", "-", "--html", "-"});
  EXPECT_EQ(both.rc, 2);  // a refused combination of values: a usage error
  EXPECT_NE(both.err.find("--json - and --html - both want stdout"), std::string::npos) << both.err;
}

// With --html - stdout is the HTML alone (it had " JSON: ..." before it).
TEST(CompareCommand, CompareHtmlDashHasNothingBeforeTheHtml) {
  ScratchDir dir("interrupt-html");
  const std::string saved = (dir.path() / "saved.json").string();
  const std::string json = (dir.path() / "again.json").string();
  std::ofstream(saved) << compareToJson(testing::fieldNotesReport());
  const CommandResult r =
      runCommand(runCompareCommand, {"compare", "--results", saved, "--json", json, "--html", "-"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.rfind("<!DOCTYPE html>", 0), 0U) << r.out.substr(0, 80);
  EXPECT_EQ(r.out.find("JSON:"), std::string::npos);
  EXPECT_NE(r.err.find(" JSON: " + json), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(json));
}

// `compare --results /dev/zero` read until the host ran out of memory: every
// JSON it is given (--results, --baseline, --link-json) is a regular file of
// bounded size, refused before a byte is read.
TEST(CompareCommand, AGivenJsonThatIsADeviceIsRefused) {
  for (const char* option : {"--results", "--baseline", "--link-json"}) {
    const CommandResult r = runCommand(runCompareCommand, {"compare", option, "/dev/zero"});
    EXPECT_EQ(r.rc, 1) << option;
    EXPECT_EQ(r.err,
              "nfsrdma-bench compare: /dev/zero: a character device; expected a regular file, a "
              "JSON file of at most 256 MiB (268435456 bytes)\n")
        << option;
  }
}

}  // namespace
}  // namespace nfsrdma::bench
