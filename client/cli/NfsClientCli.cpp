// nfsrdma-client: ls, stat, cat, cp, rm, mkdir, rename against NFSv4.1
// servers through our own client library. Remote paths are URLs,
// nfs://host[:port]/path?options, resolved from the server's root so any
// export in its pseudo file system can be named. Errors print one line,
// "nfsrdma-client: <operation> <path>: <reason>", and exit 1; a command
// line that cannot run as written exits 2 (verbs/ToolCli.h).
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <initializer_list>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "client/Client.h"
#include "client/cli/CliCommands.h"
#include "client/nfs4/Nfs4Status.h"
#include "verbs/ToolCli.h"
#include "verbs/UniqueFd.h"

namespace po = boost::program_options;
using nfsrdma::Client;
using nfsrdma::ClientOptions;
using nfsrdma::NfsException;
using nfsrdma::tool::UsageError;

namespace {

constexpr std::size_t kCopyChunk = 16U << 20;

// The options every file command reads, parsed from the command line.
struct CliOptions {
  bool printStats = false;                      // --stats
  std::optional<nfsrdma::TransportKind> proto;  // --proto: for URLs that do not name one
  unsigned nconnect = 0;                        // --nconnect: for URLs that do not name one; 0: none given
};

// "name=value" pairs for a --stats line.
std::string counters(std::initializer_list<std::pair<const char*, unsigned long long>> items) {
  std::string out;
  for (const auto& [name, value] : items) {
    out += (out.empty() ? "" : " ") + std::string(name) + "=" + std::to_string(value);
  }
  return out;
}

// With --stats: the RPC, session, recovery and transport counters of a client, to stderr.
void printStats(const CliOptions& o, const Client& c) {
  if (!o.printStats) return;
  const auto s = c.stats();
  const auto& r = s.rpc;
  const auto& n = s.session;
  std::cerr << "rpc: "
            << counters({{"calls", r.calls}, {"replies", r.replies}, {"timeouts", r.timeouts},
                         {"unknown_xids", r.unknownXids}, {"malformed", r.malformedReplies},
                         {"sent", r.bytesSent}, {"received", r.bytesReceived}})
            << "\nsession: "
            << counters({{"slots", n.slots}, {"slots_asked", n.slotsAsked}, {"retired", n.retiredSlots}, {"compounds", n.compounds},
                         {"waited_for_slot", n.waitedForSlot}, {"renewals", n.renewals}})
            << "\nrecovery: "
            << counters({{"outages", n.outages}, {"reconnects", n.reconnects}, {"replayed", n.replayed},
                         {"resent", n.resent}, {"uncached_replays", n.uncachedReplays},
                         {"new_sessions", n.recoveries}, {"unrecovered", n.unrecovered},
                         {"outage_ms", n.outageMillis}, {"reclaimed_opens", s.recovery.reclaimedOpens},
                         {"reopened_opens", s.recovery.reopenedOpens}, {"lost_opens", s.recovery.lostOpens},
                         {"rewritten_bytes", s.recovery.rewrittenBytes}})
            << "\n"
            << c.transportStats() << "\n";
  // A line per connection of the session: whether the load spread.
  for (std::size_t i = 0; i < s.connections.size(); ++i) {
    const auto& k = s.connections[i];
    std::cerr << "connection " << i << ": " << k.peer << " "
              << counters({{"calls", k.rpc.calls}, {"replies", k.rpc.replies}, {"bytes-sent", k.rpc.bytesSent},
                           {"bytes-received", k.rpc.bytesReceived}, {"credits", k.credits},
                           {"lost", k.rpc.connectionsLost}, {"reconnects", k.rpc.reconnects}})
              << " up=" << (k.up ? "yes" : "no") << "\n";
  }
}

struct Remote {
  ClientOptions options;
  std::string path;  // below the server's root
};

bool isRemote(const std::string& s) { return s.rfind("nfs://", 0) == 0; }

// The path part of an nfs:// URL (before any '?'), as the user typed it.
std::string urlPath(const std::string& url) {
  return url.substr(0, url.find('?'));
}

bool endsWithSlash(const std::string& s) {
  return !s.empty() && s.back() == '/';
}

Remote parseRemote(const CliOptions& o, const std::string& url) {
  Remote r;
  r.options = ClientOptions::fromUrl(url);
  // --proto for a URL that names no transport: parsed again with it, so the
  // port follows it (proto=rdma: 20049 unless the URL gives one).
  std::string more;
  if (o.proto && !r.options.givenProto) more = "proto=" + std::string(nfsrdma::transportName(*o.proto));
  if (o.nconnect != 0 && !r.options.givenNconnect) {
    more += (more.empty() ? "" : "&") + std::string("nconnect=") + std::to_string(o.nconnect);
  }
  if (!more.empty()) {
    r.options = ClientOptions::fromUrl(url + (url.find('?') == std::string::npos ? "?" : "&") + more);
  }
  // A server in its grace period holds an OPEN, REMOVE or RENAME for up to
  // a minute and a half: say why the command waits.
  r.options.onBusy = [](const std::string& what) {
    std::cerr << "nfsrdma-client: " << what << "\n";
  };
  r.options.onSessionReplaced = [](const std::string& what) {
    std::cerr << "nfsrdma-client: note: " << what << "\n";
  };
  r.options.onRecovered = [](const std::string& what) {
    std::cerr << "nfsrdma-client: note: " << what << "\n";
  };
  // The command's own work is done and durable by then: a server that will
  // not let go of the session is worth a warning, not a failed command.
  r.options.onTeardownError = [](const std::string& what) {
    std::cerr << "nfsrdma-client: warning: closing the session: " << what << "\n";
  };
  r.path = r.options.exportPath;
  r.options.exportPath = "/";
  // The URL parser drops a trailing '/', which says "a directory": a link
  // there is followed, and a file there is an error.
  const std::string typed = urlPath(url);
  if ((endsWithSlash(typed) || typed.ends_with("/.")) && !endsWithSlash(r.path)) r.path += '/';
  return r;
}

std::unique_ptr<Client> connectTo(const Remote& r) { return Client::connect(r.options); }

[[noreturn]] void fail(const std::string& message) { throw std::runtime_error(message); }

std::string errnoMessage(const std::string& what) { return what + ": " + std::strerror(errno); }

// ls(1)'s type letters and stat(1)'s type names.
struct FileTypeName {
  nfsrdma::FileType type;
  char letter;
  const char* name;
};
constexpr FileTypeName kFileTypeNames[] = {
    {nfsrdma::FileType::kRegular, '-', "regular file"},
    {nfsrdma::FileType::kDirectory, 'd', "directory"},
    {nfsrdma::FileType::kSymlink, 'l', "symbolic link"},
    {nfsrdma::FileType::kBlock, 'b', "block special file"},
    {nfsrdma::FileType::kChar, 'c', "character special file"},
    {nfsrdma::FileType::kSocket, 's', "socket"},
    {nfsrdma::FileType::kFifo, 'p', "fifo"},
};

const FileTypeName* fileTypeName(nfsrdma::FileType t) {
  for (const FileTypeName& n : kFileTypeNames) {
    if (n.type == t) return &n;
  }
  return nullptr;
}

const char* typeName(const nfsrdma::Attributes& a) {
  if (a.type == nfsrdma::FileType::kRegular && a.size == 0) return "regular empty file";
  const FileTypeName* n = fileTypeName(a.type);
  return n != nullptr ? n->name : "weird file";
}

std::string modeString(const nfsrdma::Attributes& a) {
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

std::string timeString(const nfsrdma::nfs4::NfsTime& t) {
  std::time_t secs = static_cast<std::time_t>(t.seconds);
  std::tm tm{};
  ::localtime_r(&secs, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

// A child of a remote directory path, for naming an entry to the client.
std::string childPath(const std::string& dir, const std::string& name) {
  return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

int cmdLs(const CliOptions& o, const std::vector<std::string>& args) {
  if (args.size() != 1) throw UsageError("usage: nfsrdma-client ls nfs://host/path");
  Remote r = parseRemote(o, args[0]);
  auto client = connectTo(r);
  int status = 0;
  // ls -l's " -> target" after a symbolic link; one that cannot be read is
  // reported and the listing goes on, as in coreutils.
  const auto line = [&](const nfsrdma::Attributes& a, const std::string& name,
                        const std::string& path) {
    std::string shown = name;
    if (a.type == nfsrdma::FileType::kSymlink) {
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
  const nfsrdma::Attributes self = client->lstat(r.path);
  if (self.type != nfsrdma::FileType::kDirectory) {
    line(self, r.path, r.path);
  } else {
    std::vector<nfsrdma::DirectoryEntry> entries = client->readdir(r.path);
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
  if (a.type == nfsrdma::FileType::kSymlink) file += " -> " + client->readlink(r.path);
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

void writeAll(int fd, const std::uint8_t* p, std::size_t n, const std::string& what) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail(errnoMessage(what));
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
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

// The destination's attributes if it exists; nullopt if it does not.
std::optional<nfsrdma::Attributes> statIfExists(Client& c, const std::string& path,
                                                bool followLast = true) {
  try {
    return followLast ? c.stat(path) : c.lstat(path);
  } catch (const NfsException& e) {
    if (e.code() == nfsrdma::nfs4::statusError(nfsrdma::nfs4::kErrNoEnt)) return std::nullopt;
    throw;
  }
}

bool sameRemoteFile(const nfsrdma::Attributes& a, const nfsrdma::Attributes& b) {
  namespace attr = nfsrdma::nfs4::attr;
  const bool comparable = a.present.test(attr::kFsid) && a.present.test(attr::kFileId) &&
                          b.present.test(attr::kFsid) && b.present.test(attr::kFileId);
  return comparable && a.fsidMajor == b.fsidMajor && a.fsidMinor == b.fsidMinor && a.fileId == b.fileId;
}

// The last component of a path ("" for "/").
std::string baseName(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A URL with 'name' appended to its path, keeping its options.
std::string urlInDirectory(const std::string& url, const std::string& name) {
  const auto q = url.find('?');
  std::string path = url.substr(0, q);
  if (!endsWithSlash(path)) path += '/';
  return path + name + (q == std::string::npos ? "" : url.substr(q));
}

// A local file that is a kernel NFS mount's view of a file: its st_ino is
// the NFS fileid, so it can be compared with what our client sees.
bool onNfsMount(int fd) {
  struct statfs fs {};
  return ::fstatfs(fd, &fs) == 0 && fs.f_type == NFS_SUPER_MAGIC;
}

// The names a copy reports failures with: the source and destination as
// typed (dst gains the source's name when it names a directory), and the
// refusal to copy a file onto itself, worded with the destination as typed.
struct CopyNames {
  std::string src;
  std::string dst;
  std::string sameFileError;
};

// The source of a copy: a remote file through its own client, or a local
// file (not a directory).
struct CopySource {
  std::unique_ptr<Client> client;
  nfsrdma::OpenFile file;
  std::optional<nfsrdma::Attributes> attrs;  // a remote source's
  nfsrdma::UniqueFd fd;
  struct stat localStat {};  // a local source's
  std::string name;          // its last component, for a destination directory
};

// The destination of a copy: a remote file through its own client, or a
// local file.
struct CopyDestination {
  std::unique_ptr<Client> client;
  nfsrdma::OpenFile file;
  nfsrdma::UniqueFd fd;
};

CopySource openCopySource(const CliOptions& o, const std::string& src) {
  CopySource in;
  if (isRemote(src)) {
    const Remote r = parseRemote(o, src);
    in.client = connectTo(r);
    in.file = in.client->open(r.path, {});  // a directory: NFS4ERR_ISDIR
    in.attrs = in.client->fstat(in.file);
    in.name = baseName(r.path);
  } else {
    in.fd.reset(::open(src.c_str(), O_RDONLY | O_CLOEXEC));
    if (!in.fd) fail(errnoMessage("open " + src));
    if (::fstat(in.fd.get(), &in.localStat) != 0) fail(errnoMessage("stat " + src));
    if (S_ISDIR(in.localStat.st_mode)) fail("cp " + src + ": is a directory (cp copies one file)");
    in.name = baseName(src);
  }
  return in;
}

// The remote destination's attributes if it exists. A directory receives
// the source under its own name: r.path and names.dst then name that.
std::optional<nfsrdma::Attributes> resolveRemoteDestination(Client& out, Remote& r,
                                                            CopyNames& names,
                                                            const std::string& srcName) {
  std::optional<nfsrdma::Attributes> existing;
  try {
    existing = statIfExists(out, r.path);
  } catch (const NfsException& e) {
    // "file/" (the URL's '/' is kept): the message cp(1) gives.
    if (e.code() == nfsrdma::nfs4::statusError(nfsrdma::nfs4::kErrNotDir) &&
        endsWithSlash(urlPath(names.dst))) {
      fail("cp " + names.src + " " + names.dst + ": not a directory");
    }
    throw;
  }
  if (existing && existing->type == nfsrdma::FileType::kDirectory) {
    r.path = childPath(r.path, srcName);
    names.dst = urlInDirectory(names.dst, srcName);
    existing = statIfExists(out, r.path);
  } else if (endsWithSlash(urlPath(names.dst))) {
    fail("cp " + names.src + " " + names.dst + ": " +
         (existing ? "not a directory" : "no such directory"));
  }
  return existing;
}

// What refuses a copy to a remote destination, checked before opening it
// truncates it.
void checkRemoteDestination(Client& out, const Remote& r,
                            const std::optional<nfsrdma::Attributes>& existing,
                            const CopySource& in, const CopyNames& names) {
  // As GNU cp: a link to nothing is not written through (that would
  // create a file wherever it points).
  if (const auto entry = existing ? existing : statIfExists(out, r.path, false);
      entry && entry->type == nfsrdma::FileType::kSymlink) {
    fail("cp " + names.src + " " + names.dst + ": not writing through dangling symbolic link");
  }
  // Two URLs may name one file in different ways (a host name and its
  // address, another port to the same server): what the server says the
  // files are decides, not how they were written.
  if (existing && in.attrs && sameRemoteFile(*existing, *in.attrs)) fail(names.sameFileError);
  // A local source that is the destination seen another way: through a
  // kernel NFS mount of the export, or the server's own file under it
  // (ganesha's and knfsd's file IDs are the inode numbers). The same file
  // ID and size is taken as the same file: refusing a copy is recoverable,
  // emptying the source is not.
  if (existing && !in.client && existing->fileId == in.localStat.st_ino &&
      existing->size == static_cast<std::uint64_t>(in.localStat.st_size)) {
    fail(names.sameFileError + (onNfsMount(in.fd.get())
                                    ? " (the source is on an NFS mount of it)"
                                    : " (same file ID and size: the server's own file?)"));
  }
}

CopyDestination openRemoteDestination(const CliOptions& o, const CopySource& in,
                                      CopyNames& names) {
  CopyDestination out;
  Remote r = parseRemote(o, names.dst);
  out.client = connectTo(r);
  const auto existing = resolveRemoteDestination(*out.client, r, names, in.name);
  checkRemoteDestination(*out.client, r, existing, in, names);
  nfsrdma::OpenFlags flags;
  flags.read = false;
  flags.write = true;
  flags.create = true;
  flags.truncate = true;
  out.file = out.client->open(r.path, flags);
  return out;
}

// The local destination's stat if it exists. A directory receives the
// source under its own name: names.dst then names that.
std::optional<struct stat> resolveLocalDestination(CopyNames& names, const std::string& srcName) {
  std::string& dst = names.dst;
  struct stat existing {};
  bool exists = ::stat(dst.c_str(), &existing) == 0;
  if (exists && S_ISDIR(existing.st_mode)) {
    dst = (endsWithSlash(dst) ? dst : dst + "/") + srcName;
    exists = ::stat(dst.c_str(), &existing) == 0;
  } else if (endsWithSlash(dst)) {
    fail("cp " + names.src + " " + dst + ": " + (exists ? "not a directory" : "no such directory"));
  }
  if (!exists) return std::nullopt;
  return existing;
}

// What refuses a copy to an existing local destination, checked before
// opening it truncates it.
void checkLocalDestination(const struct stat& existing, const CopySource& in,
                           const CopyNames& names) {
  if (!in.client && existing.st_dev == in.localStat.st_dev &&
      existing.st_ino == in.localStat.st_ino) {
    fail(names.sameFileError);
  }
  if (in.client && in.attrs && existing.st_ino == in.attrs->fileId &&
      static_cast<std::uint64_t>(existing.st_size) == in.attrs->size) {
    const nfsrdma::UniqueFd probe(::open(names.dst.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    const bool viaMount = probe && onNfsMount(probe.get());
    fail(names.sameFileError + (viaMount ? " (the destination is on an NFS mount of it)"
                                         : " (same file ID and size: the server's own file?)"));
  }
}

CopyDestination openLocalDestination(const CopySource& in, CopyNames& names) {
  if (const auto existing = resolveLocalDestination(names, in.name)) {
    checkLocalDestination(*existing, in, names);
  }
  CopyDestination out;
  out.fd.reset(::open(names.dst.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!out.fd) fail(errnoMessage("open " + names.dst));
  return out;
}

// Up to buf.size() bytes of the source at off; fewer only at its end.
std::size_t readSource(CopySource& in, std::vector<std::uint8_t>& buf, std::uint64_t off,
                       const std::string& src) {
  if (in.client) return in.client->pread(in.file, buf, off);
  std::size_t n = 0;
  while (n < buf.size()) {
    ssize_t got = ::read(in.fd.get(), buf.data() + n, buf.size() - n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail(errnoMessage("read " + src));
    if (got == 0) break;
    n += static_cast<std::size_t>(got);
  }
  return n;
}

void copyData(CopySource& in, CopyDestination& out, const CopyNames& names) {
  std::vector<std::uint8_t> buf(kCopyChunk);
  std::uint64_t off = 0;
  for (;;) {
    const std::size_t n = readSource(in, buf, off, names.src);
    if (n == 0) break;
    if (out.client) {
      out.client->pwrite(out.file, {buf.data(), n}, off);
    } else {
      writeAll(out.fd.get(), buf.data(), n, "write " + names.dst);
    }
    off += n;
    if (n < buf.size()) break;
  }
}

void finishDestination(const CliOptions& o, CopyDestination& out, const std::string& dst) {
  if (out.client) {
    out.client->close(out.file);  // COMMITs; fails if the server lost unstable data
    printStats(o, *out.client);
    out.client->close();
    return;
  }
  // Only a regular file has data to make durable: fsync of a pipe, a
  // terminal or /dev/null fails with EINVAL after a complete copy.
  struct stat written {};
  if (::fstat(out.fd.get(), &written) != 0) fail(errnoMessage("stat " + dst));
  if (S_ISREG(written.st_mode) && ::fsync(out.fd.get()) != 0) fail(errnoMessage("fsync " + dst));
  // A write error can surface only at close.
  if (::close(out.fd.release()) != 0) fail(errnoMessage("close " + dst));
}

void finishSource(const CliOptions& o, CopySource& in) {
  if (!in.client) {
    in.fd.reset();
    return;
  }
  in.client->close(in.file);
  printStats(o, *in.client);
  in.client->close();
}

// Copies local->NFS, NFS->local or NFS->NFS; the destination is replaced.
// As cp(1), a destination that is a directory (or ends in '/') receives the
// source under its own name. Everything that can refuse the copy is checked
// before the destination is opened, because opening it truncates it: a
// source that is a directory, or a destination that is the source itself,
// must leave the destination as it was. The destination is finished (its
// data committed) before the source is let go, so a failure on the source's
// side cannot leave unstable writes uncommitted.
int cmdCp(const CliOptions& o, const std::vector<std::string>& args) {
  if (args.size() != 2)
    throw UsageError("usage: nfsrdma-client cp SRC DST (each a local path or nfs:// URL)");
  CopyNames names{args[0], args[1],
                  "cp " + args[0] + " " + args[1] + ": source and destination are the same file"};
  CopySource in = openCopySource(o, names.src);
  CopyDestination out =
      isRemote(names.dst) ? openRemoteDestination(o, in, names) : openLocalDestination(in, names);
  copyData(in, out, names);
  finishDestination(o, out, names.dst);
  finishSource(o, in);
  return 0;
}

// rm and mkdir go on with the remaining arguments after one fails, as
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
constexpr nfsrdma::tool::Subcommand<ClientCommand> kCommands[] = {
    {"ls", "URL", "list a directory (a file: that file)", cmdLs},
    {"stat", "URL", "show a file's attributes", cmdStat},
    {"cat", "URL", "write a file to standard output", cmdCat},
    {"cp", "SRC DST", "copy; each is a local path or a URL", cmdCp},
    {"rm", "URL...", "remove files or empty directories", cmdRm},
    {"mkdir", "URL...", "create directories", cmdMkdir},
    {"rename", "URL URL", "rename within one server", cmdRename},
};
// Commands with options of their own: they parse the words after their name.
constexpr nfsrdma::tool::Subcommand<nfsrdma::tool::CommandMain> kOwnOptionCommands[] = {
    {"mount", "SERVER:/export DIR [--proto rdma|tcp|both] [--run]",
     "plan (and run) the kernel client's mount; 'mount --help'", nfsrdma::cli::runMountCommand},
    {"umount", "SERVER:/export DIR [--proto ...] [--run]", "", nfsrdma::cli::runUmountCommand},
};
constexpr std::size_t kCommandWidth = 18;

void usage(std::ostream& os, const po::options_description& opts) {
  os << "usage: nfsrdma-client [options] <command> <args>\n\ncommands:\n";
  nfsrdma::tool::printCommands(os, kCommands, kCommandWidth);
  nfsrdma::tool::printCommands(os, kOwnOptionCommands, kCommandWidth);
  os << "\nURL: nfs://host[:port]/path[?uid=N&gid=N&gids=a,b&timeout=ms&busy-timeout=ms\n"
        "     &qd=N&proto=tcp&nconnect=N&bind=a,b]; several servers: nfs://a,b/path\n\n"
     << opts;
}

// The command line of a file command, parsed.
struct CliArgs {
  CliOptions options;
  bool help = false;
  std::string command;  // empty: none given
  std::vector<std::string> args;
};

po::options_description cliOptions(CliArgs& a, std::string& protoText) {
  po::options_description opts("options");
  opts.add_options()("help,h", po::bool_switch(&a.help), "show this help")(
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
  nfsrdma::tool::parseOrUsageError([&] {
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    po::notify(vm);
    given = vm.count("nconnect") > 0;
  });
  if (given && (a.options.nconnect < 1 || a.options.nconnect > 16)) {
    throw UsageError("--nconnect " + std::to_string(a.options.nconnect) + ": expected 1 to 16");
  }
  if (!protoText.empty()) {
    a.options.proto = nfsrdma::parseTransportKind(protoText);
    if (!a.options.proto) {
      throw UsageError("--proto " + protoText + ": expected tcp or rdma");
    }
  }
}

// As ls(1): output that did not reach its file (a full disk, a closed
// pipe) is an error, not a listing.
int checkStdoutFlushed(const std::string& cmd, int status) {
  return nfsrdma::tool::checkStdoutWritten("nfsrdma-client: " + cmd, std::cerr, status);
}

// The command's table entry; an unknown word is named with every command,
// then the usage, on stderr (nullptr).
const nfsrdma::tool::Subcommand<ClientCommand>* findCommand(const std::string& cmd,
                                                            const po::options_description& opts) {
  // mv: another name for rename, not in the help.
  const auto* c = nfsrdma::tool::lookupSubcommand(kCommands, cmd == "mv" ? "rename" : cmd);
  if (c != nullptr) return c;
  // Reached only with an option before it: its own options come after its name.
  if (nfsrdma::tool::lookupSubcommand(kOwnOptionCommands, cmd) != nullptr) {
    throw UsageError(cmd + " takes its options after its name: nfsrdma-client " + cmd +
                     " SERVER:/export DIR [options]");
  }
  std::vector<std::string_view> names;
  nfsrdma::tool::appendNames(names, kCommands);
  nfsrdma::tool::appendNames(names, kOwnOptionCommands);
  nfsrdma::tool::printErrorLine(std::cerr, "nfsrdma-client",
                                nfsrdma::tool::unknownCommand(cmd, names).what());
  usage(std::cerr, opts);
  return nullptr;
}

// Parse, find the command, run it, check that its output was written.
int runRemoteCommand(int argc, char** argv) {
  CliArgs a;
  std::string protoText;
  const po::options_description opts = cliOptions(a, protoText);
  parseCliArgs(argc, argv, opts, a, protoText);
  if (nfsrdma::tool::isHelpWord(a.command)) a.help = true;  // "nfsrdma-client help", as the bench's
  if (a.help || a.command.empty()) {
    usage(a.help ? std::cout : std::cerr, opts);
    return a.help ? nfsrdma::tool::kExitSuccess : nfsrdma::tool::kExitUsage;
  }
  const auto* command = findCommand(a.command, opts);
  if (command == nullptr) return nfsrdma::tool::kExitUsage;
  return checkStdoutFlushed(a.command, command->action(a.options, a.args));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2) {
    if (const auto* own = nfsrdma::tool::lookupSubcommand(kOwnOptionCommands, argv[1])) {
      return own->action(argc - 1, argv + 1);
    }
  }
  return nfsrdma::tool::runReportingErrors("nfsrdma-client", std::cerr,
                                           [&] { return runRemoteCommand(argc, argv); });
}
