// nfsrdma-client cp: a local file or a URL to a local file or a URL. As
// cp(1), a destination that is a directory takes the source's name, and
// everything that can refuse the copy is checked before the destination is
// opened (opening it truncates it).
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <string>
#include <vector>

#include "client/cli/CliCommands.h"
#include "client/cli/RemoteFiles.h"
#include "client/nfs4/Nfs4Status.h"
#include "util/ToolCli.h"
#include "util/UniqueFd.h"

namespace nfsrdma::cli {
namespace {

using tool::UsageError;

// The destination's attributes if it exists; nullopt if it does not.
std::optional<Attributes> statIfExists(Client& c, const std::string& path, bool followLast = true) {
  try {
    return followLast ? c.stat(path) : c.lstat(path);
  } catch (const NfsException& e) {
    if (e.code() == nfs4::statusError(nfs4::kErrNoEnt)) return std::nullopt;
    throw;
  }
}

bool sameRemoteFile(const Attributes& a, const Attributes& b) {
  namespace attr = nfs4::attr;
  const bool comparable = a.present.test(attr::kFsid) && a.present.test(attr::kFileId) &&
                          b.present.test(attr::kFsid) && b.present.test(attr::kFileId);
  return comparable && a.fsidMajor == b.fsidMajor && a.fsidMinor == b.fsidMinor &&
         a.fileId == b.fileId;
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
  OpenFile file;
  std::optional<Attributes> attrs;  // a remote source's
  UniqueFd fd;
  struct stat localStat {};  // a local source's
  std::string name;          // its last component, for a destination directory
};

// The destination of a copy: a remote file through its own client, or a
// local file.
struct CopyDestination {
  std::unique_ptr<Client> client;
  OpenFile file;
  UniqueFd fd;
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
std::optional<Attributes> resolveRemoteDestination(Client& out, Remote& r, CopyNames& names,
                                                   const std::string& srcName) {
  std::optional<Attributes> existing;
  try {
    existing = statIfExists(out, r.path);
  } catch (const NfsException& e) {
    // "file/" (the URL's '/' is kept): the message cp(1) gives.
    if (e.code() == nfs4::statusError(nfs4::kErrNotDir) && endsWithSlash(urlPath(names.dst))) {
      fail("cp " + names.src + " " + names.dst + ": not a directory");
    }
    throw;
  }
  if (existing && existing->type == FileType::kDirectory) {
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
void checkRemoteDestination(Client& out, const Remote& r, const std::optional<Attributes>& existing,
                            const CopySource& in, const CopyNames& names) {
  // As GNU cp: a link to nothing is not written through (that would
  // create a file wherever it points).
  if (const auto entry = existing ? existing : statIfExists(out, r.path, false);
      entry && entry->type == FileType::kSymlink) {
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

CopyDestination openRemoteDestination(const CliOptions& o, const CopySource& in, CopyNames& names) {
  CopyDestination out;
  Remote r = parseRemote(o, names.dst);
  out.client = connectTo(r);
  const auto existing = resolveRemoteDestination(*out.client, r, names, in.name);
  checkRemoteDestination(*out.client, r, existing, in, names);
  OpenFlags flags;
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
    const UniqueFd probe(::open(names.dst.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
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

}  // namespace

// Copies local->NFS, NFS->local or NFS->NFS; the destination is replaced.
// As cp(1), a destination that is a directory (or ends in '/') receives the
// source under its own name. Everything that can refuse the copy is checked
// before the destination is opened, because opening it truncates it: a
// source that is a directory, or a destination that is the source itself,
// must leave the destination as it was. The destination is finished (its
// data committed) before the source is let go, so a failure on the source's
// side cannot leave unstable writes uncommitted.
int runCopyCommand(const CliOptions& o, const std::vector<std::string>& args) {
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

}  // namespace nfsrdma::cli
