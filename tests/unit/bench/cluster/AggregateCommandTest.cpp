// `nfsrdma-bench aggregate` in this process: what it refuses before it reads
// (a count beyond the ranks', a log that is a device) and that a report it
// cannot write is a failure, not exit 0 with the report lost.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "bench/BenchCommands.h"
#include "bench/ranks/RankJson.h"
#include "tests/unit/bench/CommandCapture.h"
#include "tests/unit/bench/RankRun.h"
#include "tests/unit/bench/ScratchDir.h"

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

}  // namespace
}  // namespace nfsrdma::bench
