#include "util/ToolCli.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "util/ErrnoText.h"
#include "util/Version.h"

namespace nfsrdma::tool {

void printCommandRow(std::ostream& out, std::string_view head, std::string_view summary,
                     std::size_t width) {
  out << "  " << head;
  if (summary.empty()) {
    out << "\n";
    return;
  }
  const std::string indent(2 + width + 1, ' ');
  if (head.size() > width) {
    out << "\n" << indent;
  } else {
    out << std::string(width - head.size() + 1, ' ');
  }
  // A summary of several lines keeps its column on each.
  for (std::size_t start = 0;;) {
    const std::size_t end = summary.find('\n', start);
    out << summary.substr(start, end - start) << "\n";
    if (end == std::string_view::npos) break;
    out << indent;
    start = end + 1;
  }
}

std::string nameList(const std::vector<std::string_view>& names) {
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) list += i + 1 == names.size() ? " or " : ", ";
    list += names[i];
  }
  return list;
}

UsageError unknownCommand(std::string_view name, const std::vector<std::string_view>& names) {
  return UsageError("unknown command '" + std::string(name) + "' (expected " + nameList(names) +
                    ")");
}

void printErrorLine(std::ostream& err, std::string_view who, std::string_view message) {
  err << who << ": " << message << "\n" << std::flush;
}

bool isHelpWord(std::string_view word) {
  return word == "-h" || word == "--help" || word == "help";
}

bool isVersionWord(std::string_view word) {
  return word == "--version" || word == "version";
}

void printVersion(std::ostream& out, std::string_view tool) {
  out << tool << " " << util::versionText() << "\n" << std::flush;
}

void parseOrUsageError(const std::function<void()>& parse) {
  try {
    parse();
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
}

int runReportingErrors(std::string_view who, std::ostream& err, const std::function<int()>& body,
                       std::string_view usageText) {
  try {
    return body();
  } catch (const UsageError& e) {
    printErrorLine(err, who, e.what());
    err << usageText << std::flush;
    return kExitUsage;
  } catch (const std::exception& e) {
    printErrorLine(err, who, e.what());
    return kExitFailure;
  }
}

int checkStdoutWritten(std::string_view who, std::ostream& err, int status) {
  errno = 0;
  std::cout.flush();  // stdout's own flush, as std::cout writes through stdio
  const bool flushed = std::fflush(stdout) == 0;
  const int flushErrno = errno;
  if (flushed && std::ferror(stdout) == 0 && !std::cout.bad()) return status;
  // An earlier implicit flush may have failed: its errno is gone by now.
  const std::string why = flushErrno != 0 ? util::errnoText(flushErrno) : "write error";
  printErrorLine(err, who, "write to standard output: " + why);
  return status == kExitSuccess ? kExitFailure : status;
}

void printUsage(const Tool& tool, std::ostream& out) {
  out << "usage: " << tool.synopsis << "\n\ncommands:\n";
  printCommands(out, tool.commands, tool.width);
  out << tool.footer << std::flush;
}

int dispatch(const Tool& tool, int argc, char** argv, std::ostream& out, std::ostream& err) {
  if (argc < 2) {
    printUsage(tool, err);
    return kExitUsage;
  }
  if (isHelpWord(argv[1])) {
    printUsage(tool, out);
    return checkStdoutWritten(tool.name, err, kExitSuccess);
  }
  if (isVersionWord(argv[1])) {
    printVersion(out, tool.name);
    return checkStdoutWritten(tool.name, err, kExitSuccess);
  }
  const Subcommand<CommandMain>* command = nullptr;
  try {
    command = &findSubcommand(tool.commands, argv[1]);
  } catch (const UsageError& e) {
    printErrorLine(err, tool.name, e.what());
    printUsage(tool, err);
    return kExitUsage;
  }
  const int status = command->action(argc - 1, argv + 1);
  return checkStdoutWritten(std::string(tool.name) + " " + argv[1], err, status);
}

}  // namespace nfsrdma::tool
