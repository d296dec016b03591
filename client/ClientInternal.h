// Private to the files that implement nfsrdma::Client (client/Client*.cpp):
// ClientImpl, the open file's state, and what more than one of those files
// needs. Client.h stays the one header users include, so nothing here is
// part of the API, and only these files compile the session's headers.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/Client.h"
#include "client/nfs4/Compound.h"
#include "client/nfs4/Nfs4Constants.h"
#include "client/nfs4/Nfs4Status.h"
#include "client/nfs4/Session.h"
#include "client/nfs4/UnstableWrites.h"
#include "client/rpc/RpcClient.h"

namespace nfsrdma {

// What a file's open holds: its handle and open state, and what a reclaim
// after a server restart and a COMMIT that finds data lost need.
struct OpenFile::State {
  std::string path;  // full server path, for messages
  nfs4::FileHandle fh;
  nfs4::StateId stateId;
  std::uint32_t delegationType = nfs4::kOpenDelegateNone;
  nfs4::StateId delegation;
  std::uint64_t sizeAtOpen = 0;
  // What a reclaim after a server restart needs: the open's owner and access.
  std::string owner;
  std::uint32_t shareAccess = 0;
  std::mutex mu;
  nfs4::UnstableWrites unstable;  // what a COMMIT is owed for
  // Synchronous UNSTABLE writes not yet covered by a COMMIT, kept to be
  // written again if the COMMIT finds the server restarted (at most
  // kRetainedLimit bytes: a pwrite that would pass it COMMITs first).
  struct Retained {
    std::uint64_t offset = 0;
    std::vector<std::uint8_t> data;
    std::uint64_t reply =
        0;  // unstable.replies() with its reply counted: the COMMIT tickets that cover it
  };
  std::vector<Retained> retained;
  std::size_t retainedBytes = 0;
  // An asynchronous UNSTABLE write since the last durable COMMIT: its
  // buffer is the caller's, so its loss can only be reported.
  bool unretained = false;
  bool closing = false;  // close() began: another close() returns at once
  // CLOSE was sent: a recovery no longer reclaims the open. Not before:
  // close() COMMITs first and may write kept data again, and a restart
  // then must leave it an open with a stateid the server knows.
  bool closed = false;
  bool reclaimable = false;  // a reclaim answered NO_GRACE: reopen after RECLAIM_COMPLETE
};

// The one implementation of Client: a session (nfs4::Session) over nconnect
// RPC connections, and the export's root. Each group of members below is
// implemented in its own file (client/README.md).
class ClientImpl final : public Client {
 public:
  // ClientSetup.cpp: connects, sets up the session and resolves the export.
  explicit ClientImpl(const ClientOptions& options);
  ~ClientImpl() override;  // close(), errors ignored

  void close() override;
  const std::string& teardownError() const override { return teardownError_; }
  std::string fullPath(std::string_view path) const override;
  ClientStats stats() const override;
  std::string transportStats() const override;
  std::uint32_t maxInFlight() const override;
  std::size_t maxIoSize() const override { return maxIo_; }
  const ClientOptions& options() const override { return options_; }

  // ClientNamespace.cpp
  OpenFile open(std::string_view path, const OpenFlags& flags) override;
  void close(OpenFile& file) override;
  Attributes stat(std::string_view path) override;
  Attributes lstat(std::string_view path) override;
  std::string readlink(std::string_view path) override;
  Attributes fstat(const OpenFile& file) override;
  std::vector<DirectoryEntry> readdir(std::string_view path) override;
  void mkdir(std::string_view path, std::uint32_t mode) override;
  void unlink(std::string_view path) override;
  void rename(std::string_view from, std::string_view to) override;
  void truncate(std::string_view path, std::uint64_t size) override;
  void chmod(std::string_view path, std::uint32_t mode) override;

  // ClientSyncIo.cpp
  std::size_t pread(const OpenFile& file, std::span<std::uint8_t> buf,
                    std::uint64_t offset) override;
  void pwrite(const OpenFile& file, std::span<const std::uint8_t> data, std::uint64_t offset,
              StableHow stable) override;
  void fsync(const OpenFile& file) override;

  // ClientAsyncIo.cpp
  void preadAsync(const OpenFile& file, std::span<std::uint8_t> buf, std::uint64_t offset,
                  IoCallback done) override;
  void pwriteAsync(const OpenFile& file, std::span<const std::uint8_t> data, std::uint64_t offset,
                   StableHow stable, IoCallback done) override;
  void preadvAsync(const OpenFile& file, std::span<const ReadVector> reads,
                   VectorCallback done) override;
  std::size_t maxReadsPerCompound(std::size_t blockSize) const override;

  // A path as the COMPOUNDs that name it see it (below).
  struct PathParts;

 private:
  // ClientSetup.cpp
  // Looks the export up, checks it is a directory and sets root_ and maxIo_.
  void mountExport();
  void closeSession(bool tell);  // close(); tell: call options_.onTeardownError
  bool onIoThread() const;       // on any connection's I/O thread

  // ClientPaths.cpp
  PathParts split(std::string_view path, bool wantParent, const char* what) const;
  // What follows a symbolic link: the directories only, or the last component too.
  enum class Follow { kDirectories, kAll };
  // The same path with its links resolved, from the directory that holds
  // its last component; nullopt when there was no link to follow (and the
  // path did not have to be walked anyway: mustWalk).
  std::optional<PathParts> resolveLinks(const PathParts& parts, Follow follow,
                                        bool lastMayBeMissing);
  // What resolveLinks returns: parts' last component, leaf, in the directory dir.
  static PathParts walkedTo(const PathParts& parts, nfs4::FileHandle dir, std::string leaf);
  // The names the link's text leads to, for the walk to take in its place;
  // an absolute target takes dirs back to the export's root. `links` counts
  // the links followed (at most kMaxSymlinks).
  std::vector<std::string> linkTarget(const nfs4::FileHandle& link, const std::string& name,
                                      const std::string& what, unsigned& links,
                                      std::vector<nfs4::FileHandle>& dirs);
  // A path with ".." (or one ending in '/', which must name a directory)
  // is walked before any COMPOUND can name it.
  static bool mustWalk(const PathParts& parts);
  // Runs op(parts) and, when it fails where a symbolic link may be in the
  // way (NFS4ERR_SYMLINK or NFS4ERR_NOTDIR) and one is, once more on the
  // resolved path. Paths without links pay nothing.
  void throughLinks(const PathParts& parts, Follow follow, bool lastMayBeMissing,
                    const std::function<void(const PathParts&)>& op);
  // throughLinks for operations that see a final link itself (GETATTR):
  // op returns the type it saw, and a link there is followed and op run again.
  void throughAllLinks(const PathParts& parts, const std::function<FileType(const PathParts&)>& op);
  static void lookupAll(nfs4::CompoundEncoder& c, const nfs4::FileHandle& root,
                        const PathParts& parts);
  // The handle and type of what parts names, a link itself included; the
  // error is returned, as a walk may expect NFS4ERR_NOENT.
  Error handleAndType(const PathParts& parts, nfs4::FileHandle& fh, FileType& type);
  // handleAndType of one name in the directory dir (a walk's step).
  Error lookupIn(const nfs4::FileHandle& dir, const std::string& name, const std::string& what,
                 nfs4::FileHandle& fh, FileType& type);
  std::string readLinkParts(const PathParts& parts);

  // ClientNamespace.cpp
  Attributes statParts(const PathParts& parts);
  // Throws NFS4ERR_NOTDIR unless path (its last link not followed) is a directory.
  void requireDirectory(std::string_view path, const std::string& what);
  nfs4::FileHandle objectFh(std::string_view path, const char* what);
  // open() of a path ending in '/': always an error, EISDIR or ENOTDIR as open(2).
  [[noreturn]] void refuseOpenOfDirectory(std::string_view path, const PathParts& parts);
  // open() with truncate of an existing file; closes it again when that fails.
  void truncateOpened(OpenFile& file, const std::string& what);
  // truncate and chmod: SETATTR of what path names, a final link followed.
  void setAttrsAt(std::string_view path, const char* call, const nfs4::SetAttributes& attrs);
  // One RENAME of paths whose links are resolved as far as they need to be.
  void renameParts(const PathParts& src, const PathParts& dst, const std::string& what);

  // ClientAsyncIo.cpp
  // The results of a vectored READ, and a COMPOUND of its own for the reads
  // after one that failed.
  void vectoredReadReply(const OpenFile& file, const std::vector<ReadVector>& reads,
                         const VectorCallback& done, const Error& err, nfs4::CompoundDecoder* d);

  // ClientSyncIo.cpp
  // hints.maxReplySize: replies that may exceed ~1 KiB (READDIR) say so, so
  // RPC-over-RDMA provides a Reply chunk. `what` ("mkdir /export/d") leads
  // the errors that never reach `decode` (timeout, lost connection, an
  // error in SEQUENCE), which would otherwise not say what failed.
  Error run(const std::string& what, const nfs4::Session::Encode& encode,
            const std::function<Error(nfs4::CompoundDecoder&)>& decode,
            const rpc::CallHints& hints = {});
  // Sends part [at, at + len) of a pread or pwrite buffer; done gets its result.
  using SubmitPart = std::function<void(std::size_t at, std::size_t len, IoCallback done)>;
  // The error for a reply that took no bytes at buffer position `at`, `left` bytes short.
  using NoProgress = std::function<Error(std::size_t at, std::size_t left)>;
  // pread and pwrite: size bytes in chunks of maxIo_, all sent at once; a
  // busy answer is sent again, a short one continued. Returns the bytes
  // done: all of them, or fewer when a READ reached end of file.
  std::size_t syncIo(const char* call, std::size_t size, const SubmitPart& submit,
                     const NoProgress& noProgress);
  // COMMIT; unstable data the server lost in a restart is written again
  // where this client kept it (synchronous pwrite), else an error.
  void commitAndCheck(const std::shared_ptr<OpenFile::State>& st, const std::string& what);
  // The retained writes again, FILE_SYNC, after a COMMIT found them lost.
  void rewriteRetained(const std::shared_ptr<OpenFile::State>& st,
                       const std::vector<OpenFile::State::Retained>& lost);
  // Writes size bytes at offset with stable, through syncIo.
  void writeAll(const std::shared_ptr<OpenFile::State>& st, std::span<const std::uint8_t> data,
                std::uint64_t offset, StableHow stable, bool retained);
  // pwriteAsync's body. keep: the synchronous pwrite's copy of the data,
  // retained with the reply when the server took it UNSTABLE; null for the
  // caller's own buffers.
  using KeptCopy = std::shared_ptr<std::vector<std::uint8_t>>;
  void writeAsync(const std::shared_ptr<OpenFile::State>& st, std::span<const std::uint8_t> data,
                  std::uint64_t offset, StableHow stable, KeptCopy keep, IoCallback done);
  static constexpr std::size_t kRetainedLimit = 32U << 20;

  // ClientRecovery.cpp: the session's reclaim hook after a server restart.
  std::string reclaimOpens(nfs4::ReclaimPhase phase, const nfs4::NewSessionCall& call);
  Error reopen(OpenFile::State& st, std::uint32_t claim, const nfs4::NewSessionCall& call);
  // reopen(), sent again while the server answers DELAY or GRACE (busy-timeout).
  Error reopenWhileBusy(OpenFile::State& st, std::uint32_t claim, const nfs4::NewSessionCall& call);
  // Open files still open, for a reclaim; forgets the ones gone.
  std::vector<std::shared_ptr<OpenFile::State>> liveOpens();
  std::vector<std::shared_ptr<OpenFile::State>> liveOpensLocked();  // opensMu_ held
  void remember(const std::shared_ptr<OpenFile::State>& st);

  ClientOptions options_;
  std::vector<std::unique_ptr<rpc::RpcClient>>
      rpcs_;  // nconnect connections; [0] set the session up
  std::unique_ptr<nfs4::Session> session_;
  nfs4::FileHandle root_;
  std::size_t maxIo_ = 1U << 20;
  // Each open() is its own open-owner ("open:<client>:<n>"): a second OPEN
  // of a file by the same owner upgrades the first one's state (RFC 8881
  // section 9.9), which would leave the first OpenFile with an old stateid
  // and let either CLOSE end both.
  std::string openOwner_;
  std::atomic<std::uint64_t> opens_{0};
  std::mutex opensMu_;
  std::vector<std::weak_ptr<OpenFile::State>> openFiles_;  // for reclaims (opensMu_)
  mutable std::mutex recoveryMu_;
  RecoveryStats recovery_;           // recoveryMu_
  std::atomic<bool> closed_{false};  // close() ran (once, whichever thread came first)
  std::string teardownError_;
};

// A path as the COMPOUNDs that name it see it (split() makes one, and
// resolveLinks() one with its symbolic links followed).
struct ClientImpl::PathParts {
  std::vector<std::string_view> lookups;  // from base, or from the export root
  std::string_view leaf;                  // last component when a parent was asked for
  std::string full;
  bool wantParent = false;
  bool physical = false;       // has "..": lookups holds it, and only a walk can take it
  bool trailingSlash = false;  // ends in "/" or "/.": names a directory
  // Set once symbolic links are resolved: the directory that holds the last
  // component, which `owned` keeps (the views above may point into it).
  std::optional<nfs4::FileHandle> base;
  std::shared_ptr<const std::string> owned;
};

// The Client*.cpp files each say `using namespace client_detail`.
namespace client_detail {

using nfs4::CompoundDecoder;
using nfs4::CompoundEncoder;
using nfs4::Op;

// Bytes of a READ/WRITE COMPOUND beyond its data: RPC header with AUTH_SYS,
// SEQUENCE, PUTFH and the READ/WRITE arguments or results. Generous on purpose.
inline constexpr std::size_t kIoOverhead = 1024;

// The error for a reply that did not decode, naming what was being done.
inline Error malformedReply(const nfs4::CompoundDecoder& d, const std::string& what) {
  return makeError(ClientErrc::kMalformedReply, what + ": " + d.malformedReason());
}

// The next result must be op and succeed; else the error, led by what.
inline Error expectOk(nfs4::CompoundDecoder& d, nfs4::Op op, const std::string& what) {
  const std::uint32_t st = d.next(op);
  if (!d.ok()) return malformedReply(d, what);
  if (st != nfs4::kNfs4Ok) return makeError(nfs4::statusError(st), what);
  return {};
}

// PUTFH and the n LOOKUPs of lookupAll() must all succeed.
inline Error expectLookups(nfs4::CompoundDecoder& d, std::size_t n, const std::string& what) {
  if (Error e = expectOk(d, nfs4::Op::kPutFh, what)) return e;
  for (std::size_t i = 0; i < n; ++i) {
    if (Error e = expectOk(d, nfs4::Op::kLookup, what)) return e;
  }
  return {};
}

// An error from below (a timeout, a lost connection) led by what was being
// done ("read /export/f: ..."), which it would not otherwise say.
inline Error ledBy(Error e, const std::string& what) {
  e.context = what + (e.context.empty() ? "" : ": " + e.context);
  return e;
}

// A path's (or a link's text's) components, empty ones and "." dropped
// ("a//b/./c" is a, b, c); ".." stays, for the caller to apply.
inline std::vector<std::string_view> pathComponents(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    const auto slash = path.find('/');
    const std::string_view c = path.substr(0, slash);
    if (!c.empty() && c != ".") out.push_back(c);
    path = slash == std::string_view::npos ? std::string_view{} : path.substr(slash + 1);
  }
  return out;
}

// Throws ENAMETOOLONG, naming the path's start and its length, for a path
// (comps: its components) longer than PATH_MAX or with a name longer than
// NAME_MAX: what the kernel client refuses before it asks the server.
void refuseLongNames(const char* what, const std::string& path,
                     const std::vector<std::string_view>& comps);

// The synchronous calls throw what the asynchronous layer returns.
inline void check(const Error& e) {
  if (e) throw NfsException(e);
}

// A link's text may be up to 4 KiB: over RDMA its reply may need a Reply chunk.
inline rpc::CallHints readLinkHints() {
  rpc::CallHints h;
  h.maxReplySize = nfs4::CompoundDecoder::kMaxLinkText + kIoOverhead;
  return h;
}

// Servers answer a symbolic link where a directory belongs with either.
inline bool linkMayBeInTheWay(const NfsException& e) {
  return e.code() == nfs4::statusError(nfs4::kErrSymlink) ||
         e.code() == nfs4::statusError(nfs4::kErrNotDir);
}

}  // namespace client_detail
}  // namespace nfsrdma
