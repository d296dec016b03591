// The command-line shape the three tools share (nfsrdma-client, -bench and
// -server): a table of subcommands, the --help text built from it, the
// one-line "tool: message" error and the exit statuses. Each command parses
// its words into an options struct, validates it, runs and prints; this
// header only decides how a run ends. It lives in util/, which every folder
// may depend on and which depends on nothing but the standard library, so
// the link benchmark can use it without linking libnfs, yaml-cpp or the client.
#pragma once

#include <cstddef>
#include <functional>
#include <iterator>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace nfsrdma::tool {

// Exit statuses, as each tool's README documents them.
inline constexpr int kExitSuccess = 0;
inline constexpr int kExitFailure = 1;  // the command ran (or tried to) and failed
inline constexpr int kExitUsage = 2;    // the command line is wrong; nothing was done

// A command line that cannot be run as written: an unknown command or
// option, a missing or extra argument, a value of the wrong form. It ends
// the run with kExitUsage; any other exception is a failure (kExitFailure).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One entry of a tool's command table: its word, what follows it in the
// help ("URL", "SRC DST"), its line of help, and how it runs (the tool's
// own type: a function over argv, or over the tool's parsed options).
template <class Action>
struct Subcommand {
  std::string_view name;
  std::string_view args;
  std::string_view summary;
  Action action;
};

// "  name args" padded to width, then the summary; a longer head puts the
// summary on the next line, indented to the same column.
void printCommandRow(std::ostream& out, std::string_view head, std::string_view summary,
                     std::size_t width);
// "a, b or c", for "unknown command 'x' (expected a, b or c)".
std::string nameList(const std::vector<std::string_view>& names);
// "who: message" as one line on err; who is the tool ("nfsrdma-client"), or
// the tool and its command ("nfsrdma-bench file") for a command's errors.
void printErrorLine(std::ostream& err, std::string_view who, std::string_view message);
// -h, --help or help: what asks a tool for its command list.
bool isHelpWord(std::string_view word);
// --version or version: what asks a tool for its build.
bool isVersionWord(std::string_view word);
// "tool 0.1.0 (commit 7af4c7b5a2cc)" and a newline on out (util/Version.h):
// what --version prints, the same line for the three tools.
void printVersion(std::ostream& out, std::string_view tool);

// The rows of a table (an array or span of Subcommand), in its order.
template <class Table>
void printCommands(std::ostream& out, const Table& table, std::size_t width) {
  for (const auto& c : table) {
    const std::string head =
        c.args.empty() ? std::string(c.name) : std::string(c.name) + " " + std::string(c.args);
    printCommandRow(out, head, c.summary, width);
  }
}

// The entry named `name`, or nullptr.
template <class Table>
auto lookupSubcommand(const Table& table, std::string_view name) -> decltype(&*std::begin(table)) {
  for (const auto& c : table) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

template <class Table>
void appendNames(std::vector<std::string_view>& names, const Table& table) {
  for (const auto& c : table) names.push_back(c.name);
}

// "unknown command 'x' (expected a, b or c)".
UsageError unknownCommand(std::string_view name, const std::vector<std::string_view>& names);

// The entry named `name`; a UsageError naming it and every command when
// there is none.
template <class Table>
const auto& findSubcommand(const Table& table, std::string_view name) {
  if (const auto* c = lookupSubcommand(table, name)) return *c;
  std::vector<std::string_view> names;
  appendNames(names, table);
  throw unknownCommand(name, names);
}

// Runs a parse of the words (Boost.Program_options' store and notify) and
// throws what it throws again as a UsageError with the same text: every
// error there is one of the command line.
void parseOrUsageError(const std::function<void()>& parse);

// Runs body and turns how it ends into the exit status: what it returns;
// for a UsageError "who: message" and then usageText (often empty),
// kExitUsage; for any other exception "who: message", kExitFailure.
int runReportingErrors(std::string_view who, std::ostream& err, const std::function<int()>& body,
                       std::string_view usageText = {});

// After a command ran: what it printed on standard output (std::cout or
// stdio) must have reached it. When the flush fails or an earlier write did
// (a full disk, /dev/full, a closed pipe), "who: write to standard output:
// <errno text>" goes on err and the status becomes kExitFailure, unless it
// already said the command failed; otherwise status is returned as it was.
int checkStdoutWritten(std::string_view who, std::ostream& err, int status);

// A tool whose first word picks the command, which gets the rest of argv
// (its argv[0] is the command's word) and parses its own options.
using CommandMain = int (*)(int argc, char** argv);
struct Tool {
  std::string_view name;      // "nfsrdma-bench"
  std::string_view synopsis;  // "nfsrdma-bench <command> [options]"
  std::span<const Subcommand<CommandMain>> commands;
  std::size_t width;        // of the name column in the command list
  std::string_view footer;  // after the list: where a command's options are
};

// "usage: SYNOPSIS", the command list and the footer.
void printUsage(const Tool& tool, std::ostream& out);
// No command: the usage on err, kExitUsage. A help word: the usage on out,
// kExitSuccess. A version word: printVersion on out, kExitSuccess. A command: what it returns
// (checkStdoutWritten: a report lost on a full standard output is a failure of every command). Any
// other word: "tool: unknown command 'x' (expected ...)" and the usage on err, kExitUsage.
int dispatch(const Tool& tool, int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace nfsrdma::tool
