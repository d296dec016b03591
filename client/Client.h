// nfsrdma::Client: the public NFSv4.1 client API.
//
// Paths are relative to the export given at connect time. Synchronous calls
// throw NfsException whose message names the operation, the full path and
// the NFS4ERR_ status, e.g. "open /export/x: NFS4ERR_NOENT (no such file or
// directory)". The asynchronous READ/WRITE calls keep up to maxInFlight()
// requests on the wire (one per session slot; more wait in a queue) and are
// what the benchmarks drive at a queue depth.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "client/ClientOptions.h"
#include "client/Error.h"
#include "client/nfs4/Compound.h"
#include "client/nfs4/Session.h"
#include "client/nfs4/UnstableWrites.h"
#include "client/rpc/RpcClient.h"

namespace nfsrdma {

using nfs4::Attributes;
using nfs4::FileType;
using nfs4::StableHow;

struct OpenFlags {
  bool read = true;
  bool write = false;
  bool create = false;    // create if missing (UNCHECKED: an existing file is opened)
  bool truncate = false;  // size 0 after opening
  std::uint32_t mode = 0644;
};

struct DirectoryEntry {
  std::string name;
  Attributes attrs;  // type, size, mode, fileid, owner, times
};

// An open file: its handle and open state. Copies share the same state.
class OpenFile {
 public:
  OpenFile() = default;
  const std::string& path() const { return state_->path; }
  std::uint64_t sizeAtOpen() const { return state_->sizeAtOpen; }
  bool valid() const { return state_ != nullptr; }

 private:
  friend class Client;
  struct State {
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
      std::uint64_t reply = 0;  // unstable.replies() with its reply counted: the COMMIT tickets that cover it
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
  std::shared_ptr<State> state_;
};

struct IoResult {
  Error error;
  std::size_t bytes = 0;  // READ: bytes placed in the buffer; WRITE: bytes the server took
  bool eof = false;       // READ only
};
using IoCallback = std::function<void(const IoResult&)>;

// What riding through server restarts did to open files and unstable data.
struct RecoveryStats {
  std::uint64_t reclaimedOpens = 0;  // OPEN with CLAIM_PREVIOUS in the grace period
  std::uint64_t reopenedOpens = 0;   // ordinary opens where the server offered no grace
  std::uint64_t lostOpens = 0;       // opens neither could restore
  std::uint64_t rewrittenBytes = 0;  // UNSTABLE data written again after a verifier change
};

// One connection of the client's session (nconnect=N opens N, all bound to
// the one session): whether the load spread, and what each one lost.
struct ConnectionStats {
  std::string peer;     // the transport's describe(): "tcp 127.0.0.1:2049", "rdma 10.0.0.1:20049"
  rpc::RpcStats rpc;    // its calls, bytes, losses and reconnects
  // Calls its transport lets be in flight at once: RPC-over-RDMA's credits
  // as the server granted them; 0 for a transport without a limit (TCP).
  std::uint32_t credits = 0;
  bool up = true;       // bound to the session and taking calls
};

struct ClientStats {
  rpc::RpcStats rpc;  // every connection's counters summed
  nfs4::SessionStats session;
  RecoveryStats recovery;
  std::vector<ConnectionStats> connections;  // in connection order (the first set the session up)
};

class Client {
 public:
  // Connects, sets up the session and resolves the export; throws NfsException.
  static std::unique_ptr<Client> connect(const ClientOptions& options);
  static std::unique_ptr<Client> connect(std::string_view url);
  ~Client();  // close(), errors ignored

  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Destroys the session and client id and closes the connection. A server
  // that will not destroy them (after close() rode out DELAY and
  // CLIENTID_BUSY answers) is told to options.onTeardownError and kept in
  // teardownError(), not thrown: every file's data was committed at its own
  // close, and the server drops the client ID when its lease runs out. The
  // destructor closes as well but tells nobody.
  void close();
  // What close() could not tear down on the server, or empty.
  const std::string& teardownError() const { return teardownError_; }

  OpenFile open(std::string_view path, const OpenFlags& flags);
  // COMMITs unstable data (failing if the server lost it), then CLOSE.
  void close(OpenFile& file);
  // Reads up to buf.size() bytes; fewer only at end of file.
  std::size_t pread(const OpenFile& file, std::span<std::uint8_t> buf, std::uint64_t offset);
  // Writes all of data or throws; the server's short writes are continued.
  void pwrite(const OpenFile& file, std::span<const std::uint8_t> data, std::uint64_t offset,
              StableHow stable = StableHow::kUnstable);
  // COMMIT: unstable data becomes durable; throws if the server restarted since it was written.
  void fsync(const OpenFile& file);

  // Paths follow symbolic links as POSIX calls do: every directory on the
  // way, and the last component too except for lstat, readlink, unlink,
  // rename and mkdir. A relative link target is taken from the link's
  // directory; an absolute one from the server's root, and it must lead into
  // this client's export. At most kMaxSymlinks are followed (ELOOP beyond).
  static constexpr unsigned kMaxSymlinks = 40;
  Attributes stat(std::string_view path);
  Attributes lstat(std::string_view path);  // a symbolic link itself
  std::string readlink(std::string_view path);
  Attributes fstat(const OpenFile& file);
  std::vector<DirectoryEntry> readdir(std::string_view path);
  void mkdir(std::string_view path, std::uint32_t mode = 0755);
  void unlink(std::string_view path);  // a file or an empty directory
  void rename(std::string_view from, std::string_view to);
  void truncate(std::string_view path, std::uint64_t size);
  void chmod(std::string_view path, std::uint32_t mode);

  // Asynchronous READ/WRITE of at most maxIoSize() bytes. The callback fires
  // exactly once: on the transport's I/O thread, or inline before return when
  // the call fails at once. It must not block; it may submit more I/O. The
  // buffer must stay valid until then. Unlike pread/pwrite, these do not
  // resend a call the server answered NFS4ERR_DELAY or NFS4ERR_GRACE: the
  // callback gets that error, and the caller (which owns the pacing) decides.
  void preadAsync(const OpenFile& file, std::span<std::uint8_t> buf, std::uint64_t offset,
                  IoCallback done);
  void pwriteAsync(const OpenFile& file, std::span<const std::uint8_t> data, std::uint64_t offset,
                   StableHow stable, IoCallback done);

  // Vectored READ: several reads of one file in one COMPOUND (PUTFH, READ,
  // READ, ...), so the server pays its per-RPC cost once for all of them
  // (the vNFS idea, FAST '17). At most kMaxReadsPerCompound reads whose
  // replies fit the session's maximum response. done(i, result) fires once
  // per read, on the I/O thread. A READ that fails stops the COMPOUND (RFC
  // 8881 section 2.10.6.4 is not involved: COMPOUND itself stops at the
  // first error), so the reads after it are sent again in a COMPOUND of
  // their own and get their own results.
  struct ReadVector {
    std::span<std::uint8_t> buf;
    std::uint64_t offset = 0;
  };
  static constexpr std::size_t kMaxReadsPerCompound = 16;
  using VectorCallback = std::function<void(std::size_t index, const IoResult&)>;
  void preadvAsync(const OpenFile& file, std::span<const ReadVector> reads, VectorCallback done);
  // The most reads preadvAsync takes at once for this block size (1 over RDMA).
  std::size_t maxReadsPerCompound(std::size_t blockSize) const;

  // Calls that can be on the wire at once: the session's slots, and over
  // RDMA no more than the credits the server granted (svcrdma: 64 unless
  // its max_requests is raised). More queue in the client.
  // With nconnect the connections' credits add up.
  std::uint32_t maxInFlight() const;
  std::size_t maxIoSize() const { return maxIo_; }
  const ClientOptions& options() const { return options_; }
  // Full server path of a path relative to the export, for messages.
  std::string fullPath(std::string_view path) const;
  ClientStats stats() const;
  // The transports' counters, a line per connection ("xprt: rdma host:port calls=... ").
  std::string transportStats() const;

 private:
  // Each group below is implemented in its own file (client/README.md).

  // ClientSetup.cpp
  explicit Client(const ClientOptions& options);
  // Looks the export up, checks it is a directory and sets root_ and maxIo_.
  void mountExport();
  void closeSession(bool tell);  // close(); tell: call options_.onTeardownError
  bool onIoThread() const;       // on any connection's I/O thread

  // ClientPaths.cpp
  struct PathParts;  // ClientInternal.h
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
  std::vector<std::unique_ptr<rpc::RpcClient>> rpcs_;  // nconnect connections; [0] set the session up
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
  RecoveryStats recovery_;  // recoveryMu_
  std::atomic<bool> closed_{false};  // close() ran (once, whichever thread came first)
  std::string teardownError_;
};

// The server's "not now": NFS4ERR_DELAY (busy) or NFS4ERR_GRACE (restarted,
// in its grace period). The synchronous calls send such a call again for up
// to busy-timeout themselves; a caller that resends more (a benchmark that
// repeats calls across a longer wait) or drives the asynchronous calls asks
// this of what it got.
bool isBusy(const std::error_code& code);
inline bool isBusy(const Error& error) { return isBusy(error.code); }
// The pause before the first resend of a busy call (the Linux client's
// 0.1 s); the client's own resends double it up to 1 s.
inline constexpr std::chrono::milliseconds kFirstBusyPause{100};

}  // namespace nfsrdma
