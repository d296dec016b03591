// What the file commands of nfsrdma-client share (NfsClientCli.cpp,
// CopyCommand.cpp): the options they read, a URL turned into a client's
// options and a path, the --stats lines, and the one-line errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "client/Client.h"
#include "client/ClientOptions.h"
#include "util/ErrnoText.h"

namespace nfsrdma::cli {

// What cat and cp move per READ or WRITE call.
inline constexpr std::size_t kCopyChunk = 16U << 20;

// The options every file command reads, parsed from the command line.
struct CliOptions {
  bool printStats = false;             // --stats
  std::optional<TransportKind> proto;  // --proto: for URLs that do not name one
  unsigned nconnect = 0;               // --nconnect: for URLs that do not name one; 0: none given
};

// With --stats: the RPC, session, recovery and transport counters of a client, to stderr.
void printStats(const CliOptions& o, const Client& c);

// A URL as a command names it: the client's options (export "/") and the
// path below the server's root, with a trailing '/' kept.
struct Remote {
  ClientOptions options;
  std::string path;  // below the server's root
};
Remote parseRemote(const CliOptions& o, const std::string& url);
std::unique_ptr<Client> connectTo(const Remote& r);

bool isRemote(const std::string& s);
// The path part of an nfs:// URL (before any '?'), as the user typed it.
std::string urlPath(const std::string& url);
bool endsWithSlash(const std::string& s);
// A child of a remote directory path, for naming an entry to the client.
std::string childPath(const std::string& dir, const std::string& name);

// A command's failure: one line, exit status 1.
[[noreturn]] void fail(const std::string& message);
// "what: <errno text>" (util/ErrnoText.h).
using util::errnoMessage;
// All n bytes to fd, or fail naming what.
void writeAll(int fd, const std::uint8_t* p, std::size_t n, const std::string& what);

}  // namespace nfsrdma::cli
