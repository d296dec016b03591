// `nfsrdma-bench aggregate` in this process: what it refuses before it reads
// (a count beyond the ranks', a log that is a device) and that a report it
// cannot write is a failure, not exit 0 with the report lost.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "bench/BenchCommands.h"
#include "bench/ranks/RankJson.h"
#include "bench/report/Json.h"
#include "tests/unit/bench/CommandCapture.h"
#include "tests/unit/bench/RankRun.h"
#include "tests/unit/bench/ScratchDir.h"
#include "util/Version.h"

namespace nfsrdma::bench {
namespace {

using testing::CommandResult;
using testing::runCommand;
using testing::ScratchDir;

// One client's result line for one cell, in a log file.
std::string oneClientLog(const ScratchDir& dir) {
  const std::string path = dir.str() + "/pods.log";
  std::ofstream(path) << rankToJsonLine(testing::ranFor(0, "4k-randread nfs", 1, 3, 100));
  return path;
}

TEST(AggregateCommand, ClientsBeyondTheRanksLimitAreAUsageError) {
  ScratchDir dir("aggregate-clients");
  const CommandResult r =
      runCommand(runAggregateCommand, {"aggregate", "--clients", "4097", oneClientLog(dir)});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "nfsrdma-bench aggregate: --clients 4097: expected 1..4096\n");
  EXPECT_EQ(r.out, "");
}

TEST(AggregateCommand, ALogThatIsADeviceIsRefused) {
  const CommandResult r = runCommand(runAggregateCommand, {"aggregate", "/dev/zero"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err,
            "nfsrdma-bench aggregate: /dev/zero: a character device; expected a regular file, a "
            "log of result lines of at most 4096 MiB (4294967296 bytes)\n");
}

TEST(AggregateCommand, AReportThatCannotBeWrittenIsAFailure) {
  ScratchDir dir("aggregate-full");
  const std::string log = oneClientLog(dir);
  for (const char* option : {"--html", "--json"}) {
    const CommandResult r =
        runCommand(runAggregateCommand, {"aggregate", option, "/dev/full", log});
    EXPECT_EQ(r.rc, 1) << option;
    EXPECT_EQ(r.err, std::string("nfsrdma-bench aggregate: cannot write the ") +
                         (option == std::string("--html") ? "HTML report" : "JSON") +
                         " to /dev/full: No space left on device\n")
        << option;
  }
  const CommandResult fine =
      runCommand(runAggregateCommand, {"aggregate", "--html", dir.str() + "/r.html", log});
  EXPECT_EQ(fine.rc, 0) << fine.err;
  EXPECT_NE(fine.out.find("4k-randread nfs:"), std::string::npos) << fine.out;
}

// The JSON names the build that added up, next to its schema; ranks of
// several builds are said on stderr and in the cell, each build with its ranks.
TEST(AggregateCommand, TheJsonNamesItsBuildAndRanksOfSeveralBuildsAreSaid) {
  ScratchDir dir("aggregate-builds");
  RankResult a = testing::ranFor(0, "4k-randread nfs", 1, 3, 100);
  RankResult b = testing::ranFor(1, "4k-randread nfs", 1, 3, 100);
  a.version = util::versionText();
  const std::string log = dir.str() + "/pods.log";
  std::ofstream(log) << rankToJsonLine(a) << rankToJsonLine(b);
  const CommandResult r = runCommand(runAggregateCommand, {"aggregate", "--json", "-", log});
  EXPECT_EQ(r.rc, 0) << r.err;
  const std::string note = "the ranks ran different builds: " + std::string(util::versionText()) +
                           " on rank 0; an unnamed build on rank 1";
  EXPECT_EQ(r.err, "nfsrdma-bench aggregate: 4k-randread nfs: " + note + "\n");
  const JsonValue doc = parseJson(r.out);
  EXPECT_EQ(doc.str("schema"), "nfsrdma-bench-aggregate/1");
  EXPECT_EQ(doc.str("nfsrdma_version"), util::versionText());
  ASSERT_EQ(doc.find("cells")->array.size(), 1U);
  EXPECT_EQ(doc.find("cells")->array[0].str("builds_differ"), note);
}

}  // namespace
}  // namespace nfsrdma::bench
