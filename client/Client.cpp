#include "client/Client.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <future>
#include <optional>
#include <random>
#include <thread>

#include "client/nfs4/BusyRetry.h"
#include "client/nfs4/Nfs4Constants.h"
#include "client/nfs4/Nfs4Status.h"
#include "client/transport/TcpTransport.h"
#include "client/transport/rdma/RdmaTransport.h"

namespace nfsrdma {
namespace {

using nfs4::CompoundDecoder;
using nfs4::CompoundEncoder;
using nfs4::Op;

// Bytes of a READ/WRITE COMPOUND beyond its data: RPC header with AUTH_SYS,
// SEQUENCE, PUTFH and the READ/WRITE arguments or results. Generous on purpose.
constexpr std::size_t kIoOverhead = 1024;
// Per extra READ in a vectored reply: opcode, status, eof, length and up to 3 pad bytes.
constexpr std::size_t kPerVectoredRead = 24;

const nfs4::Bitmap kStatAttrs{nfs4::attr::kType,      nfs4::attr::kChange,      nfs4::attr::kSize,
                              nfs4::attr::kFsid,      nfs4::attr::kFileId,      nfs4::attr::kMode,
                              nfs4::attr::kNumLinks,
                              nfs4::attr::kOwner,     nfs4::attr::kOwnerGroup,  nfs4::attr::kSpaceUsed,
                              nfs4::attr::kTimeAccess, nfs4::attr::kTimeMetadata, nfs4::attr::kTimeModify};
const nfs4::Bitmap kDirAttrs{nfs4::attr::kType, nfs4::attr::kSize, nfs4::attr::kFileId, nfs4::attr::kMode,
                             nfs4::attr::kOwner, nfs4::attr::kOwnerGroup, nfs4::attr::kTimeModify};

// The error for a reply that did not decode, naming what was being done.
Error malformedReply(const CompoundDecoder& d, const std::string& what) {
  return makeError(ClientErrc::kMalformedReply, what + ": " + d.malformedReason());
}

// Ends reads [from, count) of a vectored READ with the same error.
void failReads(const Client::VectorCallback& done, std::size_t from, std::size_t count, const Error& e) {
  for (std::size_t i = from; i < count; ++i) done(i, IoResult{e, 0, false});
}

Error expectOk(CompoundDecoder& d, Op op, const std::string& what) {
  const std::uint32_t st = d.next(op);
  if (!d.ok()) return malformedReply(d, what);
  if (st != nfs4::kNfs4Ok) return makeError(nfs4::statusError(st), what);
  return {};
}

void check(const Error& e) {
  if (e) throw NfsException(e);
}

std::string hostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

// One receive buffer per credit stays registered for the connection's life.
constexpr std::uint32_t kMaxRdmaCredits = 1024;

// The one place a transport is chosen. A kind this switch does not know
// (a value cast from outside the enum) is an error, never a default.
std::unique_ptr<transport::Transport> makeTransport(const ClientOptions& o) {
  switch (o.proto) {
    case TransportKind::kTcp: return transport::TcpTransport::connect(o.host, o.port, o.timeout, o.bindAddress);
    case TransportKind::kRdma: {
    transport::rdma::RdmaTransportOptions r;
    r.host = o.host;
    r.port = o.port;
    r.bindAddress = o.bindAddress;
    r.timeout = o.timeout;
    // Every session slot may hold a send buffer while it waits for credits.
    r.sendBuffers = std::max<std::uint32_t>(r.sendBuffers, o.queueDepth + 8);
    // As many credits as slots are asked for (the server may grant fewer):
    // a queue deeper than 64 would otherwise wait for credits in the client.
    r.credits = std::clamp<std::uint32_t>(o.queueDepth, r.credits, kMaxRdmaCredits);
    r.registration = o.perIoRegistration ? transport::rdma::MemoryRegistration::kPerIo
                                         : transport::rdma::MemoryRegistration::kPooled;
    return transport::rdma::RdmaTransport::connect(r);
    }
  }
  throw NfsException(makeError(ClientErrc::kInvalidArgument, "transport kind " +
                                                                 std::to_string(static_cast<int>(o.proto)) +
                                                                 " (expected tcp or rdma)"));
}

// Waits for a number of asynchronous completions and keeps the first error.
class CompletionGroup {
 public:
  void add() {
    std::lock_guard lock(mu_);
    ++outstanding_;
  }
  void done(const Error& e) {
    std::lock_guard lock(mu_);
    if (e && !first_) first_ = e;
    if (--outstanding_ == 0) cv_.notify_all();
  }
  Error wait() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return outstanding_ == 0; });
    return first_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::size_t outstanding_ = 0;
  Error first_;
};

// Submits one asynchronous call and waits for its result (every call ends
// within the RPC timeout, so the wait is bounded).
template <typename Submit>
IoResult waitFor(Submit&& submit) {
  IoResult result;
  CompletionGroup group;
  group.add();
  submit([&result, &group](const IoResult& r) {
    result = r;
    group.done(r.error);
  });
  group.wait();
  return result;
}

// The waiting between sends of one operation that the server answered
// NFS4ERR_DELAY or NFS4ERR_GRACE (nfs4/BusyRetry.h): one budget and one
// notice per operation, however many requests it sends again.
class BusyWait {
 public:
  explicit BusyWait(const ClientOptions& o) : o_(o) {}
  // Pauses and returns true when the request that got e may go again;
  // false once the budget is spent (e then says how often it was sent).
  bool pauseBeforeResend(Error& e) {
    if (o_.busyTimeout.count() == 0) return false;
    const auto now = nfs4::BusyRetry::Clock::now();
    if (!retry_) {
      retry_.emplace(o_.busyTimeout, now);
      if (o_.onBusy) {
        o_.onBusy(e.message() + "; sending it again for up to " +
                  std::to_string(o_.busyTimeout.count()) + " ms (busy-timeout)");
      }
    }
    const std::optional<std::chrono::milliseconds> pause = retry_->nextPause(now);
    if (!pause) {
      e.context += ", sent " + std::to_string(retry_->retries() + 1) +
                   " times within busy-timeout=" + std::to_string(o_.busyTimeout.count()) + " ms";
      return false;
    }
    std::this_thread::sleep_for(*pause);
    return true;
  }

 private:
  const ClientOptions& o_;
  std::optional<nfs4::BusyRetry> retry_;
};

// An asynchronous READ or WRITE sent again while the server answers DELAY
// or GRACE; both are idempotent (the same bytes to the same place).
template <typename Submit>
IoResult resendWhileBusy(IoResult r, BusyWait& wait, Submit&& submit) {
  while (nfs4::BusyRetry::busy(r.error) && wait.pauseBeforeResend(r.error)) r = waitFor(submit);
  return r;
}

}  // namespace

struct Client::PathParts {
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

std::unique_ptr<Client> Client::connect(std::string_view url) { return connect(ClientOptions::fromUrl(url)); }

std::unique_ptr<Client> Client::connect(const ClientOptions& options) {
  return std::unique_ptr<Client>(new Client(options));
}

Client::Client(const ClientOptions& options) : options_(options) {
  rpc::AuthSysParams auth;
  auth.machineName = options_.machineName.empty() ? hostName() : options_.machineName;
  auth.uid = options_.uid;
  auth.gid = options_.gid;
  auth.gids = options_.gids;
  auth.stamp = static_cast<std::uint32_t>(::getpid());
  rpc_ = std::make_unique<rpc::RpcClient>(makeTransport(options_), nfs4::kNfsProgram, nfs4::kNfsVersion,
                                          rpc::Credential::sys(auth), options_.timeout);

  std::random_device rd;
  const std::string unique = std::to_string(rd()) + "-" + std::to_string(rd());
  nfs4::SessionOptions so;
  so.slots = options_.queueDepth;
  so.maxRequestSize = static_cast<std::uint32_t>(options_.maxIoSize + kIoOverhead + 4096);
  so.maxResponseSize = so.maxRequestSize;
  // Room for a vectored READ (SEQUENCE, PUTFH and the READs) and the
  // longest path walk; the server may grant fewer.
  so.maxOperations = static_cast<std::uint32_t>(kMaxReadsPerCompound + 2);
  so.onReplaced = options_.onSessionReplaced;
  so.ownerId = "nfsrdma:" + auth.machineName + ":" + std::to_string(::getpid()) + ":" + unique;
  openOwner_ = "open:" + unique;
  session_ = std::make_unique<nfs4::Session>(*rpc_, so);

  // Resolve the export and learn the server's I/O limits.
  std::vector<std::string_view> comps;
  std::string_view p = options_.exportPath;
  while (!p.empty()) {
    auto slash = p.find('/');
    std::string_view c = p.substr(0, slash);
    if (!c.empty()) comps.push_back(c);
    p = slash == std::string_view::npos ? std::string_view{} : p.substr(slash + 1);
  }
  const std::string what = "mount " + options_.exportPath;
  nfs4::Attributes rootAttrs;
  Error e = run(
      what,
      [&](CompoundEncoder& c) {
        c.putRootFh();
        for (auto comp : comps) c.lookup(comp);
        c.getFh();
        c.getAttr(nfs4::Bitmap{nfs4::attr::kType, nfs4::attr::kMaxRead, nfs4::attr::kMaxWrite});
      },
      [&](CompoundDecoder& d) -> Error {
        if (Error x = expectOk(d, Op::kPutRootFh, what)) return x;
        for (std::size_t i = 0; i < comps.size(); ++i) {
          if (Error x = expectOk(d, Op::kLookup, what)) return x;
        }
        if (Error x = expectOk(d, Op::kGetFh, what)) return x;
        root_ = d.getFh();
        if (Error x = expectOk(d, Op::kGetAttr, what)) return x;
        rootAttrs = d.getAttr();
        if (!d.ok()) return malformedReply(d, what);
        return {};
      });
  if (!e && rootAttrs.type != FileType::kDirectory) {
    e = makeError(nfs4::statusError(nfs4::kErrNotDir), what);
  }
  if (e) {
    (void)session_->close();
    throw NfsException(e);
  }
  const auto& fore = session_->fore();
  std::size_t limit = options_.maxIoSize;
  limit = std::min<std::size_t>(limit, fore.maxResponseSize > kIoOverhead ? fore.maxResponseSize - kIoOverhead : 4096);
  limit = std::min<std::size_t>(limit, fore.maxRequestSize > kIoOverhead ? fore.maxRequestSize - kIoOverhead : 4096);
  if (rootAttrs.maxRead > 0) limit = std::min<std::size_t>(limit, rootAttrs.maxRead);
  if (rootAttrs.maxWrite > 0) limit = std::min<std::size_t>(limit, rootAttrs.maxWrite);
  maxIo_ = std::max<std::size_t>(limit & ~std::size_t{4095}, 4096);
}

Client::~Client() {
  try {
    closeSession(false);
  } catch (...) {  // a destructor reports nothing; close() explicitly to see errors
  }
}

void Client::close() { closeSession(true); }

void Client::closeSession(bool tell) {
  if (closed_) return;
  // close() waits for replies that only the I/O thread can deliver.
  if (rpc_->onIoThread()) check(makeError(ClientErrc::kInvalidArgument, "close() from an I/O callback"));
  closed_ = true;
  Error e = session_->close();
  rpc_->shutdown();
  if (!e) return;
  teardownError_ = e.message();
  // Only an explicit close() tells: a destructor runs as a failed command
  // unwinds, whose own error already says why the server is out of reach.
  if (tell && options_.onTeardownError) options_.onTeardownError(teardownError_);
}

std::string Client::fullPath(std::string_view path) const { return joinPath(options_.exportPath, path); }

namespace {
// A path's (or a link's text's) components, empty ones and "." dropped
// ("a//b/./c" is a, b, c); ".." stays, for the caller to apply.
std::vector<std::string_view> pathComponents(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    const auto slash = path.find('/');
    const std::string_view c = path.substr(0, slash);
    if (!c.empty() && c != ".") out.push_back(c);
    path = slash == std::string_view::npos ? std::string_view{} : path.substr(slash + 1);
  }
  return out;
}
}  // namespace

Client::PathParts Client::split(std::string_view path, bool wantParent, const char* what) const {
  PathParts parts;
  parts.full = std::string(what) + " " + fullPath(path);
  parts.wantParent = wantParent;
  // "." is dropped here. ".." is not a name a server looks up
  // (NFS4ERR_BADNAME): a path with one is walked component by component, so
  // that it goes back from where a symbolic link before it led, as in POSIX.
  parts.lookups = pathComponents(path);
  parts.physical =
      std::find(parts.lookups.begin(), parts.lookups.end(), "..") != parts.lookups.end();
  // "d/" and "d/." name a directory: a link there is followed even by lstat.
  parts.trailingSlash = !parts.lookups.empty() && (path.back() == '/' || path.ends_with("/."));
  if (wantParent) {
    // An entry is named by its own name: "d/." and "d/.." name d and its
    // parent, which rmdir(2) and rename(2) refuse as well.
    const bool endsInDot = path == "." || path.ends_with("/.");
    if (parts.lookups.empty() || parts.lookups.back() == ".." || endsInDot) {
      throw NfsException(makeError(ClientErrc::kInvalidArgument, parts.full + ": expected a path naming an entry below the export"));
    }
    parts.leaf = parts.lookups.back();
    parts.lookups.pop_back();
  }
  const std::size_t ops = parts.lookups.size() + 6;
  if (!parts.physical && ops > session_->fore().maxOperations) {
    throw NfsException(makeError(ClientErrc::kInvalidArgument,
                                 parts.full + ": path has " + std::to_string(parts.lookups.size()) +
                                     " directories, more than the server's " +
                                     std::to_string(session_->fore().maxOperations) +
                                     " operations per COMPOUND allow"));
  }
  return parts;
}

Error Client::run(const std::string& what, const nfs4::Session::Encode& encode,
                  const std::function<Error(CompoundDecoder&)>& decode,
                  const rpc::CallHints& hints) {
  if (rpc_->onIoThread()) {
    return makeError(ClientErrc::kInvalidArgument,
                     what + ": synchronous NFS call from an I/O callback (it would deadlock)");
  }
  BusyWait wait(options_);
  for (;;) {
    std::uint32_t firstNonIdempotent = CompoundEncoder::kAllIdempotent;
    bool decoded = false;
    std::uint32_t status = nfs4::kNfs4Ok;
    std::uint32_t results = 0;
    Error e = session_->roundTrip(
        [&](CompoundEncoder& c) {
          encode(c);
          firstNonIdempotent = c.firstNonIdempotentOp();
        },
        [&](CompoundDecoder& d) {
          decoded = true;
          status = d.status();
          results = d.resultCount();
          return decode(d);
        },
        hints);
    if (e && !decoded) e.context = what + (e.context.empty() ? "" : ": " + e.context);
    if (!nfs4::BusyRetry::resendable(e, decoded, status, results, firstNonIdempotent) ||
        !wait.pauseBeforeResend(e)) {
      return e;
    }
  }
}

void Client::lookupAll(CompoundEncoder& c, const nfs4::FileHandle& root, const PathParts& parts) {
  c.putFh(parts.base ? *parts.base : root);
  for (auto comp : parts.lookups) c.lookup(comp);
}

namespace {
Error expectLookups(CompoundDecoder& d, std::size_t n, const std::string& what) {
  if (Error e = expectOk(d, Op::kPutFh, what)) return e;
  for (std::size_t i = 0; i < n; ++i) {
    if (Error e = expectOk(d, Op::kLookup, what)) return e;
  }
  return {};
}
}  // namespace

namespace {
// A link's text may be up to 4 KiB: over RDMA its reply may need a Reply chunk.
rpc::CallHints readLinkHints() {
  rpc::CallHints h;
  h.maxReplySize = CompoundDecoder::kMaxLinkText + kIoOverhead;
  return h;
}
}  // namespace

std::optional<Client::PathParts> Client::resolveLinks(const PathParts& parts, Follow follow,
                                                      bool lastMayBeMissing) {
  const std::string& what = parts.full;
  std::deque<std::string> todo(parts.lookups.begin(), parts.lookups.end());
  if (parts.wantParent) todo.emplace_back(parts.leaf);
  // The caller runs its operation on what this returns, links or not.
  const bool force = mustWalk(parts);
  const bool followLast = follow == Follow::kAll || (parts.trailingSlash && !parts.wantParent);
  const std::vector<std::string_view> exportComps = pathComponents(options_.exportPath);
  // dirs.back() is the directory the walk stands in; the ones before it are
  // where ".." goes back to.
  std::vector<nfs4::FileHandle> dirs{parts.base ? *parts.base : root_};
  unsigned links = 0;
  std::string leaf;
  // Links of up to kMaxLinkText bytes could make the walk long: a bound on
  // its round trips, far above any real path.
  constexpr unsigned kMaxWalk = 4096;
  for (unsigned steps = 0; !todo.empty(); ++steps) {
    if (steps == kMaxWalk) {
      check(makeError(std::make_error_code(std::errc::filename_too_long),
                      what + ": more than " + std::to_string(kMaxWalk) +
                          " names to look up through its links"));
    }
    std::string name = std::move(todo.front());
    todo.pop_front();
    if (name == "..") {
      if (dirs.size() == 1) {
        check(
            makeError(ClientErrc::kInvalidArgument, what + ": '..' leads above the export's root"));
      }
      dirs.pop_back();
      continue;
    }
    const bool last = todo.empty();
    if (last && !followLast) {
      leaf = std::move(name);
      break;
    }
    nfs4::FileHandle fh;
    nfs4::Attributes a;
    const Error e = run(
        what,
        [&](CompoundEncoder& c) {
          c.putFh(dirs.back());
          c.lookup(name);
          c.getFh();
          c.getAttr(nfs4::Bitmap{nfs4::attr::kType});
        },
        [&](CompoundDecoder& d) -> Error {
          if (Error x = expectOk(d, Op::kPutFh, what)) return x;
          if (Error x = expectOk(d, Op::kLookup, what)) return x;
          if (Error x = expectOk(d, Op::kGetFh, what)) return x;
          fh = d.getFh();
          if (Error x = expectOk(d, Op::kGetAttr, what)) return x;
          a = d.getAttr();
          return d.ok() ? Error{} : malformedReply(d, what);
        });
    if (e && last && lastMayBeMissing && e.code == nfs4::statusError(nfs4::kErrNoEnt)) {
      leaf = std::move(name);  // to be created
      break;
    }
    check(e);
    if (a.type == FileType::kSymlink) {
      if (++links > kMaxSymlinks) {
        check(makeError(
            std::make_error_code(std::errc::too_many_symbolic_link_levels),
            what + ": more than " + std::to_string(kMaxSymlinks) + " symbolic links on the way"));
      }
      std::string text;
      check(run(
          what,
          [&](CompoundEncoder& c) {
            c.putFh(fh);
            c.readLink();
          },
          [&](CompoundDecoder& d) -> Error {
            if (Error x = expectOk(d, Op::kPutFh, what)) return x;
            if (Error x = expectOk(d, Op::kReadLink, what)) return x;
            text = d.readLink();
            return d.ok() ? Error{} : malformedReply(d, what);
          },
          readLinkHints()));
      // Views into text, copied into todo below while text lives.
      std::vector<std::string_view> comps = pathComponents(text);
      if (text.front() == '/') {
        // The server's namespace: the target must lie in this export, whose
        // root is all the walk can stand on.
        if (comps.size() < exportComps.size() ||
            !std::equal(exportComps.begin(), exportComps.end(), comps.begin())) {
          check(makeError(ClientErrc::kInvalidArgument,
                          what + ": symbolic link '" + name + "' points to " + text +
                              ", outside the export " + options_.exportPath));
        }
        comps.erase(comps.begin(), comps.begin() + static_cast<std::ptrdiff_t>(exportComps.size()));
        dirs.resize(1);
        dirs.front() = root_;
      }
      todo.insert(todo.begin(), comps.begin(), comps.end());
      continue;
    }
    if (last) {
      if (parts.trailingSlash && !parts.wantParent && a.type != FileType::kDirectory) {
        check(makeError(nfs4::statusError(nfs4::kErrNotDir),
                        what + " (a path that ends in '/' names a directory)"));
      }
      leaf = std::move(name);
      break;
    }
    if (a.type != FileType::kDirectory) {
      if (links == 0 && !force) return std::nullopt;  // the caller's own error says it
      check(makeError(nfs4::statusError(nfs4::kErrNotDir),
                      what + ": '" + name + "' is not a directory"));
    }
    dirs.push_back(std::move(fh));
  }
  if (links == 0 && !force) return std::nullopt;
  PathParts out;
  out.full = parts.full;
  out.wantParent = parts.wantParent;
  out.base = dirs.back();
  out.owned = std::make_shared<const std::string>(std::move(leaf));
  // An empty leaf: the path ended in a directory (a link to "..", say).
  if (out.wantParent) {
    out.leaf = *out.owned;
  } else if (!out.owned->empty()) {
    out.lookups.push_back(*out.owned);
  }
  return out;
}

namespace {
// Servers answer a symbolic link where a directory belongs with either.
bool linkMayBeInTheWay(const NfsException& e) {
  return e.code() == nfs4::statusError(nfs4::kErrSymlink) ||
         e.code() == nfs4::statusError(nfs4::kErrNotDir);
}
}  // namespace

bool Client::mustWalk(const PathParts& parts) {
  // "x/" must also be found to be a directory, which only the walk checks.
  return parts.physical || (parts.trailingSlash && !parts.wantParent);
}

void Client::throughLinks(const PathParts& parts, Follow follow, bool lastMayBeMissing,
                          const std::function<void(const PathParts&)>& op) {
  if (mustWalk(parts)) {
    op(*resolveLinks(parts, follow, lastMayBeMissing));
    return;
  }
  try {
    op(parts);
  } catch (const NfsException& e) {
    if (!linkMayBeInTheWay(e)) throw;
    std::optional<PathParts> resolved = resolveLinks(parts, follow, lastMayBeMissing);
    if (!resolved) throw;
    op(*resolved);
  }
}

void Client::throughAllLinks(const PathParts& parts,
                             const std::function<FileType(const PathParts&)>& op) {
  FileType type = FileType::kRegular;
  throughLinks(parts, Follow::kAll, false, [&](const PathParts& p) { type = op(p); });
  // GETATTR describes a link itself: one as the last component is followed now.
  if (type == FileType::kSymlink) {
    if (std::optional<PathParts> resolved = resolveLinks(parts, Follow::kAll, false)) op(*resolved);
  }
}

OpenFile Client::open(std::string_view path, const OpenFlags& flags) {
  PathParts parts = split(path, true, "open");
  auto st = std::make_shared<OpenFile::State>();
  st->path = fullPath(path);
  nfs4::OpenArgs args;
  args.clientId = session_->clientId();
  const std::string owner =
      openOwner_ + ":" + std::to_string(opens_.fetch_add(1, std::memory_order_relaxed));
  args.owner = {reinterpret_cast<const std::uint8_t*>(owner.data()), owner.size()};
  args.shareAccess = (flags.write ? (flags.read ? nfs4::kShareAccessBoth : nfs4::kShareAccessWrite)
                                  : nfs4::kShareAccessRead) |
                     nfs4::kShareAccessWantNoDeleg;
  args.create = flags.create;
  args.createAttrs.mode = flags.mode;
  if (flags.create && flags.truncate) args.createAttrs.size = 0;
  if (parts.trailingSlash) {
    // "f/" names a directory, which OPEN cannot open: EISDIR or ENOTDIR as open(2).
    std::uint32_t status = nfs4::kErrIsDir;  // stat of "x/" finds only a directory
    try {
      (void)stat(path);
    } catch (const NfsException& e) {
      // Reported as the open's, not the stat's that found it.
      if (e.code() != nfs4::statusError(nfs4::kErrNotDir)) check(makeError(e.code(), parts.full));
      status = nfs4::kErrNotDir;
    }
    check(makeError(nfs4::statusError(status), parts.full));
  }
  const auto openAt = [&](const PathParts& p) {
    // A link that ends in a directory ("..") leaves no name to open.
    if (p.leaf.empty()) check(makeError(nfs4::statusError(nfs4::kErrIsDir), p.full));
    args.name = p.leaf;
    check(run(
        p.full,
        [&](CompoundEncoder& c) {
          lookupAll(c, root_, p);
          c.open(args);
          c.getFh();
          c.getAttr(nfs4::Bitmap{nfs4::attr::kType, nfs4::attr::kSize});
        },
        [&](CompoundDecoder& d) -> Error {
          if (Error e = expectLookups(d, p.lookups.size(), p.full)) return e;
          if (Error e = expectOk(d, Op::kOpen, p.full)) return e;
          nfs4::OpenResult r = d.open();
          st->stateId = r.stateId;
          st->delegationType = r.delegationType;
          st->delegation = r.delegationStateId;
          if (Error e = expectOk(d, Op::kGetFh, p.full)) return e;
          st->fh = d.getFh();
          if (Error e = expectOk(d, Op::kGetAttr, p.full)) return e;
          nfs4::Attributes a = d.getAttr();
          if (!d.ok()) return malformedReply(d, p.full);
          st->sizeAtOpen = a.size;
          return {};
        }));
  };
  throughLinks(parts, Follow::kAll, flags.create, openAt);
  OpenFile f;
  f.state_ = st;
  if (flags.truncate && !flags.create) {
    try {
      check(run(
          "truncate " + st->path,
          [&](CompoundEncoder& c) {
            c.putFh(st->fh);
            c.setAttr(st->stateId, nfs4::SetAttributes{0, std::nullopt});
          },
          [&](CompoundDecoder& d) -> Error {
            if (Error e = expectOk(d, Op::kPutFh, parts.full)) return e;
            const std::uint32_t s = d.next(Op::kSetAttr);
            d.setAttr();
            if (!d.ok()) return malformedReply(d, parts.full);
            return s == nfs4::kNfs4Ok ? Error{} : makeError(nfs4::statusError(s), "truncate " + st->path);
          }));
      st->sizeAtOpen = 0;
    } catch (...) {
      try {
        close(f);
      } catch (...) {  // the truncate error is the one to report
      }
      throw;
    }
  }
  return f;
}

void Client::commitAndCheck(OpenFile::State& st, const std::string& what) {
  nfs4::UnstableWrites::CommitTicket ticket;
  {
    std::lock_guard lock(st.mu);
    ticket = st.unstable.beginCommit();
  }
  nfs4::Verifier committed{};
  check(run(
      what,
      [&](CompoundEncoder& c) {
        c.putFh(st.fh);
        c.commit(0, 0);
      },
      [&](CompoundDecoder& d) -> Error {
        if (Error e = expectOk(d, Op::kPutFh, what)) return e;
        if (Error e = expectOk(d, Op::kCommit, what)) return e;
        committed = d.commit();
        if (!d.ok()) return malformedReply(d, what);
        return {};
      }));
  std::lock_guard lock(st.mu);
  if (st.unstable.endCommit(ticket, committed) == nfs4::UnstableWrites::CommitOutcome::kLost) {
    throw NfsException(makeError(std::make_error_code(std::errc::io_error),
                                 what + ": the server restarted since the data was written (write verifier "
                                        "changed); unstable data was lost and must be written again"));
  }
}

void Client::close(OpenFile& file) {
  if (!file.state_) return;
  OpenFile::State& st = *file.state_;
  const std::string what = "close " + st.path;
  {
    std::lock_guard lock(st.mu);
    if (st.closed) return;
    st.closed = true;
  }
  bool unstable;
  {
    std::lock_guard lock(st.mu);
    unstable = st.unstable.owed();
  }
  // CLOSE even when COMMIT fails (the open state must not leak), then report the COMMIT failure.
  std::exception_ptr commitFailure;
  if (unstable) {
    try {
      commitAndCheck(st, what);
    } catch (...) {
      commitFailure = std::current_exception();
    }
  }
  Error e = run(
      what,
      [&](CompoundEncoder& c) {
        c.putFh(st.fh);
        c.close(st.stateId);
        if (st.delegationType == nfs4::kOpenDelegateRead || st.delegationType == nfs4::kOpenDelegateWrite) {
          c.delegReturn(st.delegation);
        }
      },
      [&](CompoundDecoder& d) -> Error {
        if (Error x = expectOk(d, Op::kPutFh, what)) return x;
        if (Error x = expectOk(d, Op::kClose, what)) return x;
        (void)d.close();
        if (st.delegationType == nfs4::kOpenDelegateRead || st.delegationType == nfs4::kOpenDelegateWrite) {
          if (Error x = expectOk(d, Op::kDelegReturn, what)) return x;
        }
        return {};
      });
  if (commitFailure) std::rethrow_exception(commitFailure);
  check(e);
}

void Client::preadAsync(const OpenFile& file, std::span<std::uint8_t> buf, std::uint64_t offset, IoCallback done) {
  if (buf.size() > maxIo_) {
    done(IoResult{makeError(ClientErrc::kInvalidArgument, "read " + file.path() + ": " + std::to_string(buf.size()) +
                                                              " bytes exceed the " + std::to_string(maxIo_) +
                                                              "-byte I/O size"),
                  0, false});
    return;
  }
  auto st = file.state_;
  // One READ per COMPOUND: its data may land straight in 'buf' (RDMA Write chunk).
  rpc::CallHints hints;
  hints.directReplies[0] = buf;
  hints.directCount = 1;
  hints.maxReplySize = kIoOverhead;
  session_->submit(
      [st, offset, count = static_cast<std::uint32_t>(buf.size())](CompoundEncoder& c) {
        c.putFh(st->fh);
        c.read(st->stateId, offset, count);
      },
      [st, buf, done = std::move(done)](const Error& err, CompoundDecoder* d) {
        IoResult r;
        if (err) {
          r.error = err;
          r.error.context = "read " + st->path + (err.context.empty() ? "" : ": " + err.context);
          done(r);
          return;
        }
        const std::uint32_t s1 = d->next(Op::kPutFh);
        const std::uint32_t s2 = s1 == nfs4::kNfs4Ok ? d->next(Op::kRead) : s1;
        if (!d->ok()) {
          r.error = malformedReply(*d, "read " + st->path);
        } else if (s2 != nfs4::kNfs4Ok) {
          r.error = makeError(nfs4::statusError(s2), "read " + st->path);
        } else {
          nfs4::ReadResult rr = d->read();
          if (!d->ok()) {
            r.error = malformedReply(*d, "read " + st->path);
          } else if (rr.placed) {
            if (rr.placedLength > buf.size()) {
              r.error = makeError(ClientErrc::kMalformedReply, "read " + st->path + ": server placed " +
                                                                   std::to_string(rr.placedLength) + " bytes for a " +
                                                                   std::to_string(buf.size()) + "-byte READ");
            } else {
              r.bytes = rr.placedLength;
              r.eof = rr.eof;
            }
          } else if (rr.data.size() > buf.size()) {
            r.error = makeError(ClientErrc::kMalformedReply,
                                "read " + st->path + ": server returned " + std::to_string(rr.data.size()) +
                                    " bytes for a " + std::to_string(buf.size()) + "-byte READ");
          } else {
            if (!rr.data.empty()) std::memcpy(buf.data(), rr.data.data(), rr.data.size());
            r.bytes = rr.data.size();
            r.eof = rr.eof;
          }
        }
        done(r);
      },
      hints);
}

std::size_t Client::maxReadsPerCompound(std::size_t blockSize) const {
  if (options_.proto == TransportKind::kRdma) return 1;  // one READ (one Write chunk) per COMPOUND there
  const auto& fore = session_->fore();
  const std::size_t room = fore.maxResponseSize > kIoOverhead ? fore.maxResponseSize - kIoOverhead : 0;
  // The server's ca_maxoperations counts SEQUENCE and PUTFH too.
  const std::size_t ops = fore.maxOperations > 2 ? fore.maxOperations - 2 : 1;
  return std::clamp<std::size_t>(std::min(room / (blockSize + kPerVectoredRead), ops), 1, kMaxReadsPerCompound);
}

void Client::preadvAsync(const OpenFile& file, std::span<const ReadVector> reads, VectorCallback done) {
  if (reads.empty()) return;
  if (reads.size() == 1) {
    preadAsync(file, reads[0].buf, reads[0].offset,
               [done = std::move(done)](const IoResult& r) { done(0, r); });
    return;
  }
  if (options_.proto == TransportKind::kRdma) {
    failReads(done, 0, reads.size(),
              makeError(ClientErrc::kInvalidArgument,
                        "read " + file.path() + ": vectored READs need proto=tcp (over RDMA each READ's data is "
                                                "placed by its own Write chunk, one READ per COMPOUND)"));
    return;
  }
  std::size_t largest = 0;
  for (const ReadVector& r : reads) largest = std::max(largest, r.buf.size());
  if (reads.size() > maxReadsPerCompound(largest) || largest > maxIo_) {
    failReads(done, 0, reads.size(),
              makeError(ClientErrc::kInvalidArgument,
                        "read " + file.path() + ": " + std::to_string(reads.size()) + " reads of up to " +
                            std::to_string(largest) + " bytes do not fit one COMPOUND (at most " +
                            std::to_string(maxReadsPerCompound(largest)) + ")"));
    return;
  }
  auto st = file.state_;
  // The reply holds every READ's data in line (no direct placement), so the
  // transport is told how large it may be (RDMA sizes its Reply chunk by it).
  rpc::CallHints hints;
  hints.maxReplySize = kIoOverhead + reads.size() * (largest + kPerVectoredRead);
  auto vec = std::make_shared<std::vector<ReadVector>>(reads.begin(), reads.end());
  session_->submit(
      [st, vec](CompoundEncoder& c) {
        c.putFh(st->fh);
        for (const ReadVector& r : *vec) c.read(st->stateId, r.offset, static_cast<std::uint32_t>(r.buf.size()));
      },
      [this, file, st, vec, done = std::move(done)](const Error& err, CompoundDecoder* d) {
        const std::string what = "read " + st->path;
        if (err) {
          Error e = err;
          e.context = what + (err.context.empty() ? "" : ": " + err.context);
          failReads(done, 0, vec->size(), e);
          return;
        }
        std::uint32_t status = d->next(Op::kPutFh);
        if (d->ok() && status != nfs4::kNfs4Ok) {  // no READ ran; they would all fail the same way
          failReads(done, 0, vec->size(), makeError(nfs4::statusError(status), what));
          return;
        }
        std::size_t i = 0;
        for (; i < vec->size(); ++i) {
          status = d->next(Op::kRead);
          if (!d->ok() || status != nfs4::kNfs4Ok) break;
          const nfs4::ReadResult rr = d->read();
          if (!d->ok()) break;
          IoResult r;
          if (rr.data.size() > (*vec)[i].buf.size()) {
            r.error = makeError(ClientErrc::kMalformedReply,
                                what + ": server returned " + std::to_string(rr.data.size()) + " bytes for a " +
                                    std::to_string((*vec)[i].buf.size()) + "-byte READ");
          } else {
            if (!rr.data.empty()) std::memcpy((*vec)[i].buf.data(), rr.data.data(), rr.data.size());
            r.bytes = rr.data.size();
            r.eof = rr.eof;
          }
          done(i, r);
        }
        if (i >= vec->size()) return;
        if (!d->ok()) {
          failReads(done, i, vec->size(), malformedReply(*d, what));
          return;
        }
        // The READ at i failed: it gets its status; the ones after it never
        // ran and go again on their own.
        if (status != nfs4::kNfs4Ok) {
          done(i, IoResult{makeError(nfs4::statusError(status), what), 0, false});
          ++i;
        }
        if (i >= vec->size()) return;
        const std::size_t first = i;
        std::vector<ReadVector> rest(vec->begin() + static_cast<std::ptrdiff_t>(first), vec->end());
        preadvAsync(file, rest, [done, first](std::size_t j, const IoResult& r) { done(first + j, r); });
      },
      hints);
}

void Client::pwriteAsync(const OpenFile& file, std::span<const std::uint8_t> data, std::uint64_t offset,
                         StableHow stable, IoCallback done) {
  if (data.size() > maxIo_) {
    done(IoResult{makeError(ClientErrc::kInvalidArgument, "write " + file.path() + ": " +
                                                              std::to_string(data.size()) + " bytes exceed the " +
                                                              std::to_string(maxIo_) + "-byte I/O size"),
                  0, false});
    return;
  }
  auto st = file.state_;
  session_->submit(
      [st, data, offset, stable](CompoundEncoder& c) {
        c.putFh(st->fh);
        c.write(st->stateId, offset, stable, data);
      },
      [st, requested = data.size(), done = std::move(done)](const Error& err, CompoundDecoder* d) {
        IoResult r;
        if (err) {
          r.error = err;
          r.error.context = "write " + st->path + (err.context.empty() ? "" : ": " + err.context);
          done(r);
          return;
        }
        const std::uint32_t s1 = d->next(Op::kPutFh);
        const std::uint32_t s2 = s1 == nfs4::kNfs4Ok ? d->next(Op::kWrite) : s1;
        if (!d->ok()) {
          r.error = malformedReply(*d, "write " + st->path);
        } else if (s2 != nfs4::kNfs4Ok) {
          r.error = makeError(nfs4::statusError(s2), "write " + st->path);
        } else {
          nfs4::WriteResult wr = d->write();
          if (!d->ok()) {
            r.error = malformedReply(*d, "write " + st->path);
          } else if (wr.count > requested) {
            r.error = makeError(ClientErrc::kMalformedReply, "write " + st->path + ": server claims " +
                                                                 std::to_string(wr.count) + " bytes of a " +
                                                                 std::to_string(requested) + "-byte WRITE");
          } else {
            r.bytes = wr.count;
            if (wr.committed == StableHow::kUnstable) {
              std::lock_guard lock(st->mu);
              st->unstable.onWriteReply(wr.verifier);
            }
          }
        }
        done(r);
      });
}

std::size_t Client::pread(const OpenFile& file, std::span<std::uint8_t> buf, std::uint64_t offset) {
  if (rpc_->onIoThread()) check(makeError(ClientErrc::kInvalidArgument, "synchronous pread from an I/O callback"));
  // The READ of chunk i from byte `from` of the chunk to its end.
  auto readChunk = [&](std::size_t i, std::size_t from) {
    const std::size_t at = i * maxIo_ + from;
    const std::size_t len = std::min(maxIo_, buf.size() - i * maxIo_) - from;
    return [this, &file, part = buf.subspan(at, len), pos = offset + at](IoCallback cb) {
      preadAsync(file, part, pos, std::move(cb));
    };
  };
  // All chunks at once: the session keeps as many in flight as it has slots.
  const std::size_t chunks = (buf.size() + maxIo_ - 1) / maxIo_;
  std::vector<IoResult> results(chunks);
  CompletionGroup group;
  for (std::size_t i = 0; i < chunks; ++i) {
    group.add();
    readChunk(i, 0)([&results, &group, i](const IoResult& r) {
      results[i] = r;
      group.done(r.error);
    });
  }
  (void)group.wait();  // each chunk's own result is looked at below
  BusyWait busy(options_);
  std::size_t total = 0;
  for (std::size_t i = 0; i < chunks; ++i) {
    const std::size_t len = std::min(maxIo_, buf.size() - i * maxIo_);
    const IoResult first = resendWhileBusy(results[i], busy, readChunk(i, 0));
    check(first.error);
    std::size_t got = first.bytes;
    bool eof = first.eof;
    // A short read before end of file: read the rest of this chunk one READ
    // at a time. Each must make progress, so a server that keeps answering
    // 0 bytes without EOF ends in an error, not in a loop.
    while (got < len && !eof) {
      auto submit = readChunk(i, got);
      const IoResult more = resendWhileBusy(waitFor(submit), busy, submit);
      check(more.error);
      if (more.bytes == 0 && !more.eof) {
        check(makeError(std::make_error_code(std::errc::io_error),
                        "read " + file.path() + ": server returned 0 bytes at offset " +
                            std::to_string(offset + i * maxIo_ + got) + " without end of file"));
      }
      got += more.bytes;
      eof = more.eof;
    }
    total += got;
    if (got < len) break;
  }
  return total;
}

void Client::pwrite(const OpenFile& file, std::span<const std::uint8_t> data, std::uint64_t offset,
                    StableHow stable) {
  if (rpc_->onIoThread()) check(makeError(ClientErrc::kInvalidArgument, "synchronous pwrite from an I/O callback"));
  // The WRITE of chunk i from byte `from` of the chunk to its end.
  auto writeChunk = [&](std::size_t i, std::size_t from) {
    const std::size_t at = i * maxIo_ + from;
    const std::size_t len = std::min(maxIo_, data.size() - i * maxIo_) - from;
    return [this, &file, part = data.subspan(at, len), pos = offset + at, stable](IoCallback cb) {
      pwriteAsync(file, part, pos, stable, std::move(cb));
    };
  };
  const std::size_t chunks = (data.size() + maxIo_ - 1) / maxIo_;
  std::vector<IoResult> results(chunks);
  CompletionGroup group;
  for (std::size_t i = 0; i < chunks; ++i) {
    group.add();
    writeChunk(i, 0)([&results, &group, i](const IoResult& r) {
      results[i] = r;
      group.done(r.error);
    });
  }
  (void)group.wait();  // each chunk's own result is looked at below
  BusyWait busy(options_);
  for (std::size_t i = 0; i < chunks; ++i) {
    const std::size_t len = std::min(maxIo_, data.size() - i * maxIo_);
    const IoResult first = resendWhileBusy(results[i], busy, writeChunk(i, 0));
    check(first.error);
    // The server's short writes are continued one WRITE at a time; each must
    // take at least one byte.
    std::size_t done = first.bytes;
    std::size_t last = done;
    while (done < len) {
      if (last == 0) {
        check(makeError(std::make_error_code(std::errc::io_error),
                        "write " + file.path() + ": server wrote 0 of " +
                            std::to_string(len - done) + " bytes at offset " +
                            std::to_string(offset + i * maxIo_ + done)));
      }
      auto submit = writeChunk(i, done);
      const IoResult more = resendWhileBusy(waitFor(submit), busy, submit);
      check(more.error);
      last = more.bytes;
      done += more.bytes;
    }
  }
}

void Client::fsync(const OpenFile& file) { commitAndCheck(*file.state_, "fsync " + file.path()); }

Attributes Client::statParts(const PathParts& parts) {
  Attributes out;
  check(run(
      parts.full,
      [&](CompoundEncoder& c) {
        lookupAll(c, root_, parts);
        c.getAttr(kStatAttrs);
      },
      [&](CompoundDecoder& d) -> Error {
        if (Error e = expectLookups(d, parts.lookups.size(), parts.full)) return e;
        if (Error e = expectOk(d, Op::kGetAttr, parts.full)) return e;
        out = d.getAttr();
        if (!d.ok()) return malformedReply(d, parts.full);
        return {};
      }));
  return out;
}

Attributes Client::stat(std::string_view path) {
  const PathParts parts = split(path, false, "stat");
  Attributes out;
  throughAllLinks(parts, [&](const PathParts& p) {
    out = statParts(p);
    return out.type;
  });
  return out;
}

Attributes Client::lstat(std::string_view path) {
  const PathParts parts = split(path, false, "lstat");
  Attributes out;
  throughLinks(parts, Follow::kDirectories, false, [&](const PathParts& p) { out = statParts(p); });
  return out;
}

std::string Client::readlink(std::string_view path) {
  const PathParts parts = split(path, false, "readlink");
  std::string out;
  throughLinks(parts, Follow::kDirectories, false, [&](const PathParts& p) {
    check(run(
        p.full,
        [&](CompoundEncoder& c) {
          lookupAll(c, root_, p);
          c.readLink();
        },
        [&](CompoundDecoder& d) -> Error {
          if (Error e = expectLookups(d, p.lookups.size(), p.full)) return e;
          if (Error e = expectOk(d, Op::kReadLink, p.full)) return e;
          out = d.readLink();
          return d.ok() ? Error{} : malformedReply(d, p.full);
        },
        readLinkHints()));
  });
  return out;
}

void Client::requireDirectory(std::string_view path, const std::string& what) {
  // The entry itself, not where a link there points: rmdir("link/") and
  // rename("link/", ...) are ENOTDIR in POSIX.
  PathParts parts = split(path, false, "stat");
  parts.full = what;
  parts.trailingSlash = false;
  Attributes a;
  throughLinks(parts, Follow::kDirectories, false, [&](const PathParts& p) { a = statParts(p); });
  if (a.type != FileType::kDirectory) {
    check(makeError(nfs4::statusError(nfs4::kErrNotDir),
                    what + " (a path that ends in '/' names a directory)"));
  }
}

nfs4::FileHandle Client::objectFh(std::string_view path, const char* what) {
  const PathParts parts = split(path, false, what);
  nfs4::FileHandle fh;
  throughAllLinks(parts, [&](const PathParts& p) {
    FileType type = FileType::kRegular;
    check(run(
        p.full,
        [&](CompoundEncoder& c) {
          lookupAll(c, root_, p);
          c.getFh();
          c.getAttr(nfs4::Bitmap{nfs4::attr::kType});
        },
        [&](CompoundDecoder& d) -> Error {
          if (Error e = expectLookups(d, p.lookups.size(), p.full)) return e;
          if (Error e = expectOk(d, Op::kGetFh, p.full)) return e;
          fh = d.getFh();
          if (Error e = expectOk(d, Op::kGetAttr, p.full)) return e;
          type = d.getAttr().type;
          return d.ok() ? Error{} : malformedReply(d, p.full);
        }));
    return type;
  });
  return fh;
}

Attributes Client::fstat(const OpenFile& file) {
  const std::string what = "fstat " + file.path();
  Attributes out;
  check(run(
      what,
      [&](CompoundEncoder& c) {
        c.putFh(file.state_->fh);
        c.getAttr(kStatAttrs);
      },
      [&](CompoundDecoder& d) -> Error {
        if (Error e = expectOk(d, Op::kPutFh, what)) return e;
        if (Error e = expectOk(d, Op::kGetAttr, what)) return e;
        out = d.getAttr();
        if (!d.ok()) return malformedReply(d, what);
        return {};
      }));
  return out;
}

std::vector<DirectoryEntry> Client::readdir(std::string_view path) {
  const PathParts parts = split(path, false, "readdir");
  std::vector<DirectoryEntry> out;
  throughLinks(parts, Follow::kAll, false, [&](const PathParts& p) {
    out.clear();
    std::uint64_t cookie = 0;
    nfs4::Verifier verf{};
    const auto maxCount = static_cast<std::uint32_t>(
        std::min<std::size_t>(64 * 1024, session_->fore().maxResponseSize - kIoOverhead));
    // Bounded: a directory of a million entries at ~100 per round needs 10,000 rounds.
    constexpr int kMaxRounds = 100000;
    rpc::CallHints readdirHints;
    readdirHints.maxReplySize = maxCount + kIoOverhead;
    for (int round = 0;; ++round) {
      if (round == kMaxRounds) {
        check(makeError(std::make_error_code(std::errc::too_many_files_open),
                        p.full + ": READDIR did not reach its end"));
      }
      bool eof = false;
      std::size_t got = 0;
      check(run(
          p.full,
          [&](CompoundEncoder& c) {
            lookupAll(c, root_, p);
            c.readDir(cookie, verf, maxCount / 2, maxCount, kDirAttrs);
          },
          [&](CompoundDecoder& d) -> Error {
            if (Error e = expectLookups(d, p.lookups.size(), p.full)) return e;
            if (Error e = expectOk(d, Op::kReadDir, p.full)) return e;
            nfs4::ReadDirResult r = d.readDir();
            if (!d.ok()) return malformedReply(d, p.full);
            verf = r.cookieVerf;
            eof = r.eof;
            got = r.entries.size();
            for (auto& e : r.entries) {
              cookie = e.cookie;
              out.push_back(DirectoryEntry{std::move(e.name), std::move(e.attrs)});
            }
            return {};
          },
          readdirHints));
      if (eof) break;
      if (got == 0) {
        check(makeError(ClientErrc::kMalformedReply,
                        p.full + ": READDIR returned no entries and no end of directory"));
      }
    }
  });
  return out;
}

void Client::mkdir(std::string_view path, std::uint32_t mode) {
  const PathParts parts = split(path, true, "mkdir");
  throughLinks(parts, Follow::kDirectories, false, [&](const PathParts& p) {
    check(run(
        p.full,
        [&](CompoundEncoder& c) {
          lookupAll(c, root_, p);
          c.createDirectory(p.leaf, nfs4::SetAttributes{std::nullopt, mode});
        },
        [&](CompoundDecoder& d) -> Error {
          if (Error e = expectLookups(d, p.lookups.size(), p.full)) return e;
          if (Error e = expectOk(d, Op::kCreate, p.full)) return e;
          d.createDirectory();
          return d.ok() ? Error{} : malformedReply(d, p.full);
        }));
  });
}

void Client::unlink(std::string_view path) {
  const PathParts parts = split(path, true, "remove");
  if (parts.trailingSlash) requireDirectory(path, parts.full);
  throughLinks(parts, Follow::kDirectories, false, [&](const PathParts& p) {
    check(run(
        p.full,
        [&](CompoundEncoder& c) {
          lookupAll(c, root_, p);
          c.remove(p.leaf);
        },
        [&](CompoundDecoder& d) -> Error {
          if (Error e = expectLookups(d, p.lookups.size(), p.full)) return e;
          if (Error e = expectOk(d, Op::kRemove, p.full)) return e;
          d.changeInfo();
          return d.ok() ? Error{} : malformedReply(d, p.full);
        }));
  });
}

void Client::rename(std::string_view from, std::string_view to) {
  const std::string what = "rename " + fullPath(from) + " to " + fullPath(to);
  PathParts src0 = split(from, true, "rename");
  PathParts dst0 = split(to, true, "rename");
  src0.full = what;
  dst0.full = what;
  if (src0.trailingSlash || dst0.trailingSlash) requireDirectory(from, what);
  const auto renameParts = [&](const PathParts& src, const PathParts& dst) {
    // RENAME takes the source directory from the saved filehandle and the
    // target directory from the current one. Both walks in one COMPOUND count
    // against the session's operations limit (SEQUENCE, PUTFH, SAVEFH, PUTFH,
    // RENAME and the LOOKUPs): within one directory it is walked once, and a
    // target directory that would not fit is looked up on its own first.
    const bool sameDirectory = src.base == dst.base && src.lookups == dst.lookups;
    std::optional<nfs4::FileHandle> targetDirectory;
    if (!sameDirectory &&
        src.lookups.size() + dst.lookups.size() + 5 > session_->fore().maxOperations) {
      check(run(
          what,
          [&](CompoundEncoder& c) {
            lookupAll(c, root_, dst);
            c.getFh();
          },
          [&](CompoundDecoder& d) -> Error {
            if (Error e = expectLookups(d, dst.lookups.size(), what)) return e;
            if (Error e = expectOk(d, Op::kGetFh, what)) return e;
            targetDirectory = d.getFh();
            return d.ok() ? Error{} : malformedReply(d, what);
          }));
    }
    check(run(
        what,
        [&](CompoundEncoder& c) {
          lookupAll(c, root_, src);
          c.saveFh();
          if (targetDirectory) {
            c.putFh(*targetDirectory);
          } else if (!sameDirectory) {
            lookupAll(c, root_, dst);
          }
          c.rename(src.leaf, dst.leaf);
        },
        [&](CompoundDecoder& d) -> Error {
          if (Error e = expectLookups(d, src.lookups.size(), what)) return e;
          if (Error e = expectOk(d, Op::kSaveFh, what)) return e;
          if (targetDirectory) {
            if (Error e = expectOk(d, Op::kPutFh, what)) return e;
          } else if (!sameDirectory) {
            if (Error e = expectLookups(d, dst.lookups.size(), what)) return e;
          }
          if (Error e = expectOk(d, Op::kRename, what)) return e;
          d.rename();
          return d.ok() ? Error{} : malformedReply(d, what);
        }));
  };
  // As throughLinks, for two paths: either may have to be walked first, or
  // pass a link on the way.
  std::optional<PathParts> src;
  std::optional<PathParts> dst;
  if (mustWalk(src0)) src = resolveLinks(src0, Follow::kDirectories, false);
  if (mustWalk(dst0)) dst = resolveLinks(dst0, Follow::kDirectories, false);
  try {
    renameParts(src ? *src : src0, dst ? *dst : dst0);
  } catch (const NfsException& e) {
    if (!linkMayBeInTheWay(e)) throw;
    bool resolved = false;
    if (!src && (src = resolveLinks(src0, Follow::kDirectories, false))) resolved = true;
    if (!dst && (dst = resolveLinks(dst0, Follow::kDirectories, false))) resolved = true;
    if (!resolved) throw;
    renameParts(src ? *src : src0, dst ? *dst : dst0);
  }
}

namespace {
Error setAttrReply(CompoundDecoder& d, std::size_t lookups, const std::string& what) {
  if (Error e = expectLookups(d, lookups, what)) return e;
  const std::uint32_t s = d.next(Op::kSetAttr);
  d.setAttr();
  if (!d.ok()) return malformedReply(d, what);
  return s == nfs4::kNfs4Ok ? Error{} : makeError(nfs4::statusError(s), what);
}
}  // namespace

void Client::truncate(std::string_view path, std::uint64_t size) {
  // SETATTR on a link would change the link: the object is found first.
  const nfs4::FileHandle fh = objectFh(path, "truncate");
  const std::string what = "truncate " + fullPath(path);
  check(run(
      what,
      [&](CompoundEncoder& c) {
        c.putFh(fh);
        c.setAttr(nfs4::StateId{}, nfs4::SetAttributes{size, std::nullopt});  // anonymous stateid
      },
      [&](CompoundDecoder& d) { return setAttrReply(d, 0, what); }));
}

void Client::chmod(std::string_view path, std::uint32_t mode) {
  // SETATTR on a link would change the link: the object is found first.
  const nfs4::FileHandle fh = objectFh(path, "chmod");
  const std::string what = "chmod " + fullPath(path);
  check(run(
      what,
      [&](CompoundEncoder& c) {
        c.putFh(fh);
        c.setAttr(nfs4::StateId{}, nfs4::SetAttributes{std::nullopt, mode});  // anonymous stateid
      },
      [&](CompoundDecoder& d) { return setAttrReply(d, 0, what); }));
}

ClientStats Client::stats() const { return ClientStats{rpc_->stats(), session_->stats()}; }

}  // namespace nfsrdma
