// The command-line shape the three tools share (util/ToolCli.h): the
// table dispatch, where help and errors go, and the exit statuses
// (2 usage, 1 failure) each tool's README documents.
#include <gtest/gtest.h>

#include <cstdio>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/unit/FullStdout.h"
#include "util/ToolCli.h"
#include "util/Version.h"

namespace nfsrdma::tool {
namespace {

// What the table's commands saw: their argv, as words.
std::vector<std::string> g_seen;

int echoCommand(int argc, char** argv) {
  g_seen.assign(argv, argv + argc);
  return 7;
}
int usageErrorCommand(int, char**) {
  return runReportingErrors("demo bad", std::cerr,
                            []() -> int { throw UsageError("--size x: expected a number"); });
}

constexpr Subcommand<CommandMain> kTable[] = {
    {"echo", "", "prints nothing, returns 7", echoCommand},
    {"bad", "", "a usage error", usageErrorCommand},
};
const Tool kTool{"demo", "demo <command> [options]", kTable, 8, "\nfooter\n"};

struct Dispatched {
  int status = -1;
  std::string out, err;
};

Dispatched dispatchWords(std::vector<std::string> words) {
  words.insert(words.begin(), "demo");
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  std::ostringstream out, err;
  Dispatched r;
  r.status = dispatch(kTool, static_cast<int>(argv.size()), argv.data(), out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

const char* const kUsageText =
    "usage: demo <command> [options]\n\ncommands:\n"
    "  echo     prints nothing, returns 7\n"
    "  bad      a usage error\n"
    "\nfooter\n";

TEST(ToolCli, ACommandGetsTheRestOfArgvAndItsStatusIsTheTools) {
  const Dispatched r = dispatchWords({"echo", "--x", "y"});
  EXPECT_EQ(r.status, 7);
  EXPECT_EQ(g_seen, (std::vector<std::string>{"echo", "--x", "y"}));
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
}

TEST(ToolCli, HelpGoesToStdoutAndExitsZero) {
  for (const char* word : {"--help", "-h", "help"}) {
    const Dispatched r = dispatchWords({word});
    EXPECT_EQ(r.status, kExitSuccess) << word;
    EXPECT_EQ(r.out, kUsageText) << word;
    EXPECT_EQ(r.err, "") << word;
  }
}

// --version or version: the tool's name and the build's version on
// stdout, exit 0; the same line for each tool.
TEST(ToolCli, VersionGoesToStdoutAndExitsZero) {
  for (const char* word : {"--version", "version"}) {
    const Dispatched r = dispatchWords({word});
    EXPECT_EQ(r.status, kExitSuccess) << word;
    EXPECT_EQ(r.out, "demo " + std::string(util::versionText()) + "\n") << word;
    EXPECT_EQ(r.err, "") << word;
  }
  EXPECT_FALSE(isVersionWord("-v"));  // -v is many commands' verbose, not ours to take
}

// The version CMakeLists.txt's project() gives, and the commit as 12 hex
// digits (with -dirty) or "unknown" for a tree that is no repository.
TEST(ToolCli, TheVersionNamesTheProjectVersionAndTheCommit) {
  EXPECT_EQ(util::projectVersion(), NFSRDMA_PROJECT_VERSION);
  const std::string commit(util::commitId());
  EXPECT_TRUE(commit == "unknown" || std::regex_match(commit, std::regex("[0-9a-f]{12}(-dirty)?")))
      << commit;
  EXPECT_EQ(util::versionText(), std::string(NFSRDMA_PROJECT_VERSION) + " (commit " + commit + ")");
}

TEST(ToolCli, NoCommandIsAUsageErrorWithTheUsageOnStderr) {
  const Dispatched r = dispatchWords({});
  EXPECT_EQ(r.status, kExitUsage);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, kUsageText);
}

TEST(ToolCli, AnUnknownCommandIsNamedOnStderrWithExit2) {
  const Dispatched r = dispatchWords({"ehco"});
  EXPECT_EQ(r.status, kExitUsage);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            std::string("demo: unknown command 'ehco' (expected echo or bad)\n") + kUsageText);
}

TEST(ToolCli, AUsageErrorIsOneLineAndExit2) {
  std::ostringstream err;
  const int status = runReportingErrors(
      "demo cmd", err, []() -> int { throw UsageError("--size x: expected a number"); },
      "usage: demo cmd [--size N]\n");
  EXPECT_EQ(status, kExitUsage);
  EXPECT_EQ(err.str(), "demo cmd: --size x: expected a number\nusage: demo cmd [--size N]\n");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(dispatchWords({"bad"}).status, kExitUsage);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "demo bad: --size x: expected a number\n");
}

TEST(ToolCli, AFailureIsOneLineAndExit1) {
  std::ostringstream err;
  const int status = runReportingErrors(
      "demo", err, []() -> int { throw std::runtime_error("open /x: no such file"); }, "usage\n");
  EXPECT_EQ(status, kExitFailure);
  EXPECT_EQ(err.str(), "demo: open /x: no such file\n") << "no usage after a failure";
  std::ostringstream quiet;
  EXPECT_EQ(runReportingErrors("demo", quiet, [] { return 3; }), 3);
  EXPECT_EQ(quiet.str(), "");
}

// `nfsrdma-bench aggregate LOG > /dev/full` printed its report into nothing
// and exited 0: a command's standard output is checked when it ends, for
// stdio and std::cout alike, and the help too.
int printCommand(int, char**) {
  std::printf("a report line\n");
  std::cout << "and one more\n";
  return kExitSuccess;
}
int failingPrintCommand(int, char**) {
  std::printf("half a report\n");
  return 3;
}
constexpr Subcommand<CommandMain> kPrinters[] = {
    {"print", "", "prints a report", printCommand},
    {"fail", "", "prints, then fails with 3", failingPrintCommand},
};
const Tool kPrintTool{"demo", "demo <command>", kPrinters, 8, ""};

TEST(ToolCli, OutputLostOnAFullStdoutIsAFailureNamingTheCommand) {
  for (const char* word : {"print", "fail", "--help"}) {
    std::vector<std::string> words{"demo", word};
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    std::ostringstream err;
    int status = -1;
    {
      const nfsrdma::testing::FullStdout full;
      status = dispatch(kPrintTool, 2, argv.data(), std::cout, err);
    }
    const bool help = std::string(word) == "--help";
    // The help flushes as it ends: that write's errno is gone when the tool looks.
    const std::string expected = help ? "demo: write to standard output: write error\n"
                                      : std::string("demo ") + word +
                                            ": write to standard output: No space left on device\n";
    EXPECT_EQ(err.str(), expected) << word;
    // A command that failed keeps its own status; one that succeeded fails.
    EXPECT_EQ(status, std::string(word) == "fail" ? 3 : kExitFailure) << word;
  }
  std::ostringstream err;
  std::vector<std::string> words{"demo", "print"};
  std::vector<char*> argv{words[0].data(), words[1].data()};
  ::testing::internal::CaptureStdout();
  const int status = dispatch(kPrintTool, 2, argv.data(), std::cout, err);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "a report line\nand one more\n");
  EXPECT_EQ(status, kExitSuccess);
  EXPECT_EQ(err.str(), "");
}

TEST(ToolCli, AParseErrorIsAUsageErrorWithItsText) {
  try {
    parseOrUsageError([] { throw std::logic_error("unrecognised option '--frobnicate'"); });
    ADD_FAILURE() << "nothing thrown";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "unrecognised option '--frobnicate'");
  }
  EXPECT_NO_THROW(parseOrUsageError([] {}));
}

TEST(ToolCli, CommandRowsLineUpAndLongHeadsWrap) {
  std::ostringstream out;
  printCommandRow(out, "ls URL", "list a directory", 10);
  printCommandRow(out, "mount SERVER:/export DIR", "plan the mount", 10);
  printCommandRow(out, "serve CONFIG", "run it\n[--port N]", 12);
  printCommandRow(out, "umount", "", 10);
  EXPECT_EQ(out.str(),
            "  ls URL     list a directory\n"
            "  mount SERVER:/export DIR\n"
            "             plan the mount\n"
            "  serve CONFIG run it\n"
            "               [--port N]\n"
            "  umount\n");
  EXPECT_EQ(nameList({"a"}), "a");
  EXPECT_EQ(nameList({"a", "b", "c"}), "a, b or c");
}

}  // namespace
}  // namespace nfsrdma::tool
