// The command-line shape the three tools share (verbs/ToolCli.h): the
// table dispatch, where help and errors go, and the exit statuses
// (2 usage, 1 failure) each tool's README documents.
#include <gtest/gtest.h>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "verbs/ToolCli.h"

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
  EXPECT_EQ(r.err, std::string("demo: unknown command 'ehco' (expected echo or bad)\n") + kUsageText);
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
