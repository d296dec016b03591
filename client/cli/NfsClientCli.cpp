// nfsrdma-client: ls, stat, cat, cp, rm, mkdir, rename against NFSv4.1
// servers through our own client library. Remote paths are URLs,
// nfs://host[:port]/path?options, resolved from the server's root so any
// export in its pseudo file system can be named. Errors print one line,
// "nfsrdma-client: <operation> <path>: <reason>", and exit 1; a command
// line that cannot run as written exits 2 (util/ToolCli.h).
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <string>
#include <vector>

#include "client/Client.h"
#include "client/cli/CliCommands.h"
#include "client/cli/RemoteFiles.h"
#include "util/ToolCli.h"

namespace po = boost::program_options;

namespace nfsrdma::cli {
namespace {

using tool::UsageError;

// ls(1)'s type letters and stat(1)'s type names.
struct FileTypeName {
  FileType type;
  char letter;
  const char* name;
};
constexpr FileTypeName kFileTypeNames[] = {
    {FileType::kRegular, '-', "regular file"},
    {FileType::kDirectory, 'd', "directory"},
    {FileType::kSymlink, 'l', "symbolic link"},
    {FileType::kBlock, 'b', "block special file"},
    {FileType::kChar, 'c', "character special file"},
    {FileType::kSocket, 's', "socket"},
    {FileType::kFifo, 'p', "fifo"},
};

const FileTypeName* fileTypeName(FileType t) {
  for (const FileTypeName& n : kFileTypeNames) {
    if (n.type == t) return &n;
  }
  return nullptr;
}

const char* typeName(const Attributes& a) {
  if (a.type == FileType::kRegular && a.size == 0) return "regular empty file";
  const FileTypeName* n = fileTypeName(a.type);
  return n != nullptr ? n->name : "weird file";
}

std::string modeString(const Attributes& a) {
  std::string s = "?---------";
  if (const FileTypeName* n = fileTypeName(a.type)) s[0] = n->letter;
  const char* rwx = "rwxrwxrwx";
  for (int i = 0; i < 9; ++i) {
    if (a.mode & (1U << (8 - i))) s[static_cast<std::size_t>(i) + 1] = rwx[i];
  }
  // setuid, setgid and sticky take the execute columns, as in ls(1): lower
  // case over an execute bit, upper case without one.
  const auto special = [&](std::uint32_t bit, std::size_t column, char letter) {
    if ((a.mode & bit) == 0) return;
    s[column] = s[column] == '-' ? static_cast<char>(letter - 'a' + 'A') : letter;
  };
  special(04000U, 3, 's');
  special(02000U, 6, 's');
  special(01000U, 9, 't');
  return s;
}

std::string timeString(const nfs4::NfsTime& t) {
  std::time_t secs = static_cast<std::time_t>(t.seconds);
  std::tm tm{};
  ::localtime_r(&secs, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

int cmdLs(const CliOptions& o, const std::vector<std::string>& args) {
  if (args.size() != 1) throw UsageError("usage: nfsrdma-client ls nfs://host/path");
  Remote r = parseRemote(o, args[0]);
  auto client = connectTo(r);
  int status = 0;
  // ls -l's " -> target" after a symbolic link; one that cannot be read is
  // reported and the listing goes on, as in coreutils.
  const auto line = [&](const Attributes& a, const std::string& name, const std::string& path) {
    std::string shown = name;
    if (a.type == FileType::kSymlink) {
      try {
        shown += " -> " + client->readlink(path);
      } catch (const NfsException& e) {
        std::fprintf(stderr, "nfsrdma-client: %s\n", e.what());
        status = 1;
      }
    }
    std::printf("%s %-10s %-10s %12llu %s %s\n", modeString(a).c_str(), a.owner.c_str(),
                a.ownerGroup.c_str(), static_cast<unsigned long long>(a.size),
                timeString(a.timeModify).c_str(), shown.c_str());
  };
  // As ls -l: a file or a symbolic link is listed as itself, a directory (or
  // a link to one named with a trailing '/') by its entries.
  const Attributes self = client->lstat(r.path);
  if (self.type != FileType::kDirectory) {
    line(self, r.path, r.path);
  } else {
    std::vector<DirectoryEntry> entries = client->readdir(r.path);
    std::sort(entries.begin(), entries.end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
    for (const auto& e : entries) line(e.attrs, e.name, childPath(r.path, e.name));
  }
  printStats(o, *client);
  client->close();
  return status;
}

int cmdStat(const CliOptions& o, const std::vector<std::string>& args) {
  if (args.size() != 1) throw UsageError("usage: nfsrdma-client stat nfs://host/path");
  Remote r = parseRemote(o, args[0]);
  auto client = connectTo(r);
  // As stat(1) without -L: a symbolic link itself, and where it points.
  auto a = client->lstat(r.path);
  std::string file = client->fullPath(r.path);
  if (a.type == FileType::kSymlink) file += " -> " + client->readlink(r.path);
  std::printf(
      "  File: %s\n  Size: %llu\tType: %s\n  Mode: %04o (%s)\tLinks: %u\n  Owner: %s\tGroup: %s\n"
      "FileId: %llu\tChange id: %llu\tSpace used: %llu\nAccess: %s\nModify: %s\nChange: %s\n",
      file.c_str(), static_cast<unsigned long long>(a.size), typeName(a), a.mode & 07777U,
      modeString(a).c_str(), a.numLinks, a.owner.c_str(), a.ownerGroup.c_str(),
      static_cast<unsigned long long>(a.fileId), static_cast<unsigned long long>(a.change),
      static_cast<unsigned long long>(a.spaceUsed), timeString(a.timeAccess).c_str(),
      timeString(a.timeModify).c_str(), timeString(a.timeMetadata).c_str());
  printStats(o, *client);
  client->close();
  return 0;
}

int cmdCat(const CliOptions& o, const std::vector<std::string>& args) {
  if (args.size() != 1) throw UsageError("usage: nfsrdma-client cat nfs://host/path");
  Remote r = parseRemote(o, args[0]);
  auto client = connectTo(r);
  auto f = client->open(r.path, {});
  std::vector<std::uint8_t> buf(kCopyChunk);
  for (std::uint64_t off = 0;;) {
    std::size_t n = client->pread(f, buf, off);
    writeAll(STDOUT_FILENO, buf.data(), n, "write to standard output");
    off += n;
    if (n < buf.size()) break;
  }
  client->close(f);
  printStats(o, *client);
  client->close();
  return 0;
}

// rm(1) and mkdir(1) do; each failure is one line, and the exit status is 1.
template <class Operation>
int forEachRemote(const CliOptions& o, const std::vector<std::string>& args, Operation op) {
  int status = 0;
  for (const auto& a : args) {
    try {
      Remote r = parseRemote(o, a);
      auto client = connectTo(r);
      op(*client, r.path);
      printStats(o, *client);
      client->close();
    } catch (const std::exception& e) {
      std::cerr << "nfsrdma-client: " << e.what() << "\n";
      status = 1;
    }
  }
  return status;
}

int cmdRm(const CliOptions& o, const std::vector<std::string>& args) {
  if (args.empty()) throw UsageError("usage: nfsrdma-client rm nfs://host/path...");
  return forEachRemote(o, args, [](Client& c, const std::string& path) { c.unlink(path); });
}

int cmdMkdir(const CliOptions& o, const std::vector<std::string>& args) {
  if (args.empty()) throw UsageError("usage: nfsrdma-client mkdir nfs://host/path...");
  return forEachRemote(o, args, [](Client& c, const std::string& path) { c.mkdir(path); });
}

int cmdRename(const CliOptions& o, const std::vector<std::string>& args) {
  if (args.size() != 2)
    throw UsageError("usage: nfsrdma-client rename nfs://host/old nfs://host/new");
  Remote from = parseRemote(o, args[0]);
  Remote to = parseRemote(o, args[1]);
  if (from.options.host != to.options.host || from.options.port != to.options.port) {
    fail("rename " + args[0] + " to " + args[1] + ": both must be on the same server");
  }
  auto client = connectTo(from);
  client->rename(from.path, to.path);
  printStats(o, *client);
  client->close();
  return 0;
}

using ClientCommand = int (*)(const CliOptions&, const std::vector<std::string>&);
constexpr tool::Subcommand<ClientCommand> kCommands[] = {
    {"ls", "URL", "list a directory (a file: that file)", cmdLs},
    {"stat", "URL", "show a file's attributes", cmdStat},
    {"cat", "URL", "write a file to standard output", cmdCat},
    {"cp", "SRC DST", "copy; each is a local path or a URL", runCopyCommand},
    {"rm", "URL...", "remove files or empty directories", cmdRm},
    {"mkdir", "URL...", "create directories", cmdMkdir},
    {"rename", "URL URL", "rename within one server", cmdRename},
};
// Commands with options of their own: they parse the words after their name.
constexpr tool::Subcommand<tool::CommandMain> kOwnOptionCommands[] = {
    {"mount", "SERVER:/export DIR [--proto rdma|tcp|both] [--run]",
     "plan (and run) the kernel client's mount; 'mount --help'", runMountCommand},
    {"umount", "SERVER:/export DIR [--proto ...] [--run]", "", runUmountCommand},
    {"doctor", "[SERVER] [--root DIR]",
     "PASS/WARN/FAIL of this host's NFS-over-RDMA path, each with its fix", runDoctorCommand},
};
constexpr std::size_t kCommandWidth = 18;

// The URL's shape and every key it takes (ClientOptions.h's urlKeys()).
void urlHelp(std::ostream& os) {
  os << "\nURL: nfs://host[:port][,host[:port]...]/path[?key=value&...]; keys:\n";
  constexpr std::size_t kKeyWidth = 22;
  for (const UrlKey& k : urlKeys()) {
    const std::string form = std::string(k.name) + "=" + std::string(k.value);
    os << "  " << form << std::string(form.size() < kKeyWidth ? kKeyWidth - form.size() : 1, ' ')
       << k.help << "\n";
  }
}

void usage(std::ostream& os, const po::options_description& opts) {
  os << "usage: nfsrdma-client [options] <command> <args>\n\ncommands:\n";
  tool::printCommands(os, kCommands, kCommandWidth);
  tool::printCommands(os, kOwnOptionCommands, kCommandWidth);
  urlHelp(os);
  os << "\n" << opts;
}

// The command line of a file command, parsed.
struct CliArgs {
  CliOptions options;
  bool help = false;
  bool version = false;
  std::string command;  // empty: none given
  std::vector<std::string> args;
};

po::options_description cliOptions(CliArgs& a, std::string& protoText) {
  po::options_description opts("options");
  opts.add_options()("help,h", po::bool_switch(&a.help), "show this help")(
      "version", po::bool_switch(&a.version), "print the version and commit of this build")(
      "stats", po::bool_switch(&a.options.printStats),
      "print RPC, session and transport counters (stderr) at the end")(
      "proto", po::value(&protoText),
      "tcp or rdma for URLs without proto= (rdma: port 20049 unless given)")(
      "nconnect", po::value(&a.options.nconnect),
      "connections (1-16) bound to the one session, for URLs without nconnect=");
  return opts;
}

// Boost's errors and a --proto that names no transport are usage errors.
void parseCliArgs(int argc, char** argv, const po::options_description& opts, CliArgs& a,
                  const std::string& protoText) {
  po::options_description hidden;
  hidden.add_options()("command", po::value(&a.command))("args", po::value(&a.args));
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("command", 1).add("args", -1);
  bool given = false;
  tool::parseOrUsageError([&] {
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    po::notify(vm);
    given = vm.count("nconnect") > 0;
  });
  if (given && (a.options.nconnect < 1 || a.options.nconnect > 16)) {
    throw UsageError("--nconnect " + std::to_string(a.options.nconnect) + ": expected 1 to 16");
  }
  if (!protoText.empty()) {
    a.options.proto = parseTransportKind(protoText);
    if (!a.options.proto) {
      throw UsageError("--proto " + protoText + ": expected tcp or rdma");
    }
  }
}

// As ls(1): output that did not reach its file (a full disk, a closed
// pipe) is an error, not a listing.
int checkStdoutFlushed(const std::string& cmd, int status) {
  return tool::checkStdoutWritten("nfsrdma-client: " + cmd, std::cerr, status);
}

// The command's table entry; an unknown word is named with every command,
// then the usage, on stderr (nullptr).
const tool::Subcommand<ClientCommand>* findCommand(const std::string& cmd,
                                                   const po::options_description& opts) {
  // mv: another name for rename, not in the help.
  const auto* c = tool::lookupSubcommand(kCommands, cmd == "mv" ? "rename" : cmd);
  if (c != nullptr) return c;
  // Reached only with an option before it: its own options come after its name.
  if (tool::lookupSubcommand(kOwnOptionCommands, cmd) != nullptr) {
    throw UsageError(cmd + " takes its options after its name: nfsrdma-client " + cmd +
                     " SERVER:/export DIR [options]");
  }
  std::vector<std::string_view> names;
  tool::appendNames(names, kCommands);
  tool::appendNames(names, kOwnOptionCommands);
  tool::printErrorLine(std::cerr, "nfsrdma-client", tool::unknownCommand(cmd, names).what());
  usage(std::cerr, opts);
  return nullptr;
}

// Parse, find the command, run it, check that its output was written.
int runRemoteCommand(int argc, char** argv) {
  CliArgs a;
  std::string protoText;
  const po::options_description opts = cliOptions(a, protoText);
  parseCliArgs(argc, argv, opts, a, protoText);
  if (tool::isHelpWord(a.command)) a.help = true;        // "nfsrdma-client help", as the bench's
  if (tool::isVersionWord(a.command)) a.version = true;  // "nfsrdma-client version"
  if (a.version && !a.help) {
    tool::printVersion(std::cout, "nfsrdma-client");
    return checkStdoutFlushed("--version", tool::kExitSuccess);
  }
  if (a.help || a.command.empty()) {
    usage(a.help ? std::cout : std::cerr, opts);
    return a.help ? tool::kExitSuccess : tool::kExitUsage;
  }
  const auto* command = findCommand(a.command, opts);
  if (command == nullptr) return tool::kExitUsage;
  return checkStdoutFlushed(a.command, command->action(a.options, a.args));
}

}  // namespace
}  // namespace nfsrdma::cli

int main(int argc, char** argv) {
  using namespace nfsrdma;
  if (argc >= 2) {
    if (const auto* own = tool::lookupSubcommand(cli::kOwnOptionCommands, argv[1])) {
      return own->action(argc - 1, argv + 1);
    }
  }
  return tool::runReportingErrors("nfsrdma-client", std::cerr,
                                  [&] { return cli::runRemoteCommand(argc, argv); });
}
