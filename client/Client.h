// nfsrdma::Client: the public NFSv4.1 client API.
//
// Paths are relative to the export given at connect time. Synchronous calls
// throw NfsException whose message names the operation, the full path and
// the NFS4ERR_ status, e.g. "open /export/x: NFS4ERR_NOENT (no such file or
// directory)". The asynchronous READ/WRITE calls keep up to maxInFlight()
// requests on the wire (one per session slot; more wait in a queue) and are
// what the benchmarks drive at a queue depth.
//
// This header is the API only: ClientInternal.h holds the implementation
// (ClientImpl, over nfs4::Session and its RPC connections), so users do not
// compile the session, RPC or transport headers.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "client/ClientOptions.h"
#include "client/Error.h"
#include "client/base/RpcStats.h"
#include "client/nfs4/Attributes.h"
#include "client/nfs4/SessionStats.h"

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
  const std::string& path() const;
  std::uint64_t sizeAtOpen() const;
  bool valid() const { return state_ != nullptr; }

 private:
  friend class ClientImpl;
  struct State;  // ClientInternal.h
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
  std::string peer;   // the transport's describe(): "tcp 127.0.0.1:2049", "rdma 10.0.0.1:20049"
  rpc::RpcStats rpc;  // its calls, bytes, losses and reconnects
  // Calls its transport lets be in flight at once: RPC-over-RDMA's credits
  // as the server granted them; 0 for a transport without a limit (TCP).
  std::uint32_t credits = 0;
  bool up = true;  // bound to the session and taking calls
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
  virtual ~Client() = default;  // the implementation's: close(), errors ignored

  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Destroys the session and client id and closes the connection. A server
  // that will not destroy them (after close() rode out DELAY and
  // CLIENTID_BUSY answers) is told to options.onTeardownError and kept in
  // teardownError(), not thrown: every file's data was committed at its own
  // close, and the server drops the client ID when its lease runs out. The
  // destructor closes as well but tells nobody.
  virtual void close() = 0;
  // What close() could not tear down on the server, or empty.
  virtual const std::string& teardownError() const = 0;

  virtual OpenFile open(std::string_view path, const OpenFlags& flags) = 0;
  // COMMITs unstable data (failing if the server lost it), then CLOSE.
  virtual void close(OpenFile& file) = 0;
  // Reads up to buf.size() bytes; fewer only at end of file.
  virtual std::size_t pread(const OpenFile& file, std::span<std::uint8_t> buf,
                            std::uint64_t offset) = 0;
  // Writes all of data or throws; the server's short writes are continued.
  virtual void pwrite(const OpenFile& file, std::span<const std::uint8_t> data,
                      std::uint64_t offset, StableHow stable = StableHow::kUnstable) = 0;
  // COMMIT: unstable data becomes durable; throws if the server restarted since it was written.
  virtual void fsync(const OpenFile& file) = 0;

  // Paths follow symbolic links as POSIX calls do: every directory on the
  // way, and the last component too except for lstat, readlink, unlink,
  // rename and mkdir. A relative link target is taken from the link's
  // directory; an absolute one from the server's root, and it must lead into
  // this client's export. At most kMaxSymlinks are followed (ELOOP beyond).
  static constexpr unsigned kMaxSymlinks = 40;
  virtual Attributes stat(std::string_view path) = 0;
  virtual Attributes lstat(std::string_view path) = 0;  // a symbolic link itself
  virtual std::string readlink(std::string_view path) = 0;
  virtual Attributes fstat(const OpenFile& file) = 0;
  virtual std::vector<DirectoryEntry> readdir(std::string_view path) = 0;
  virtual void mkdir(std::string_view path, std::uint32_t mode = 0755) = 0;
  virtual void unlink(std::string_view path) = 0;  // a file or an empty directory
  virtual void rename(std::string_view from, std::string_view to) = 0;
  virtual void truncate(std::string_view path, std::uint64_t size) = 0;
  virtual void chmod(std::string_view path, std::uint32_t mode) = 0;

  // Asynchronous READ/WRITE of at most maxIoSize() bytes. The callback fires
  // exactly once: on the transport's I/O thread, or inline before return when
  // the call fails at once. It must not block; it may submit more I/O. The
  // buffer must stay valid until then. Unlike pread/pwrite, these do not
  // resend a call the server answered NFS4ERR_DELAY or NFS4ERR_GRACE: the
  // callback gets that error (isBusy() tells it), and the caller (which owns
  // the pacing) decides.
  virtual void preadAsync(const OpenFile& file, std::span<std::uint8_t> buf, std::uint64_t offset,
                          IoCallback done) = 0;
  virtual void pwriteAsync(const OpenFile& file, std::span<const std::uint8_t> data,
                           std::uint64_t offset, StableHow stable, IoCallback done) = 0;

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
  virtual void preadvAsync(const OpenFile& file, std::span<const ReadVector> reads,
                           VectorCallback done) = 0;
  // The most reads preadvAsync takes at once for this block size (1 over RDMA).
  virtual std::size_t maxReadsPerCompound(std::size_t blockSize) const = 0;

  // Calls that can be on the wire at once: the session's slots, and over
  // RDMA no more than the credits the server granted (svcrdma: 64 unless
  // its max_requests is raised). More queue in the client.
  // With nconnect the connections' credits add up.
  virtual std::uint32_t maxInFlight() const = 0;
  virtual std::size_t maxIoSize() const = 0;
  virtual const ClientOptions& options() const = 0;
  // Full server path of a path relative to the export, for messages.
  virtual std::string fullPath(std::string_view path) const = 0;
  virtual ClientStats stats() const = 0;
  // The transports' counters, a line per connection ("xprt: rdma host:port calls=... ").
  virtual std::string transportStats() const = 0;

 protected:
  Client() = default;  // ClientImpl (ClientInternal.h) is the one implementation
};

// The server's "not now": NFS4ERR_DELAY (busy) or NFS4ERR_GRACE (restarted,
// in its grace period). The synchronous calls send such a call again for up
// to busy-timeout themselves; a caller that resends more (a benchmark that
// repeats calls across a longer wait) or drives the asynchronous calls asks
// this of what it got.
bool isBusy(const std::error_code& code);
inline bool isBusy(const Error& error) {
  return isBusy(error.code);
}
// The pause before the first resend of a busy call (the Linux client's
// 0.1 s); the client's own resends double it up to 1 s.
inline constexpr std::chrono::milliseconds kFirstBusyPause{100};

}  // namespace nfsrdma
