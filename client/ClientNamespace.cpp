// The calls that name files and directories by path: open and close of a
// file, stat, readdir, mkdir, unlink, rename, truncate, chmod. Each is one
// COMPOUND (or a few) through ClientPaths' link handling, with the POSIX
// rules for a trailing '/' applied before the server is asked.
#include <exception>

#include "client/ClientInternal.h"

namespace nfsrdma {
namespace {

using namespace client_detail;  // ClientInternal.h

const nfs4::Bitmap kStatAttrs{
    nfs4::attr::kType,      nfs4::attr::kChange,     nfs4::attr::kSize,
    nfs4::attr::kFsid,      nfs4::attr::kFileId,     nfs4::attr::kMode,
    nfs4::attr::kNumLinks,  nfs4::attr::kOwner,      nfs4::attr::kOwnerGroup,
    nfs4::attr::kSpaceUsed, nfs4::attr::kTimeAccess, nfs4::attr::kTimeMetadata,
    nfs4::attr::kTimeModify};
const nfs4::Bitmap kDirAttrs{nfs4::attr::kType,      nfs4::attr::kSize,  nfs4::attr::kFileId,
                             nfs4::attr::kMode,      nfs4::attr::kOwner, nfs4::attr::kOwnerGroup,
                             nfs4::attr::kTimeModify};

// SETATTR's status comes with its bitmap, which is read whatever the status.
Error setAttrReply(CompoundDecoder& d, std::size_t lookups, const std::string& what,
                   const std::string& statusWhat) {
  if (Error e = expectLookups(d, lookups, what)) return e;
  const std::uint32_t s = d.next(Op::kSetAttr);
  d.setAttr();
  if (!d.ok()) return malformedReply(d, what);
  return s == nfs4::kNfs4Ok ? Error{} : makeError(nfs4::statusError(s), statusWhat);
}

bool holdsDelegation(std::uint32_t delegationType) {
  return delegationType == nfs4::kOpenDelegateRead || delegationType == nfs4::kOpenDelegateWrite;
}

}  // namespace

const std::string& OpenFile::path() const {
  return state_->path;
}
std::uint64_t OpenFile::sizeAtOpen() const {
  return state_->sizeAtOpen;
}

void ClientImpl::refuseOpenOfDirectory(std::string_view path, const PathParts& parts) {
  std::uint32_t status = nfs4::kErrIsDir;  // stat of "x/" finds only a directory
  try {
    (void)stat(path);
  } catch (const NfsException& e) {
    // Reported as the open's, not the stat's that found it.
    if (e.code() != nfs4::statusError(nfs4::kErrNotDir)) check(makeError(e.code(), parts.full));
    status = nfs4::kErrNotDir;
  }
  throw NfsException(makeError(nfs4::statusError(status), parts.full));
}

void ClientImpl::truncateOpened(OpenFile& file, const std::string& what) {
  OpenFile::State& st = *file.state_;
  const std::string truncateWhat = "truncate " + st.path;
  try {
    check(run(
        truncateWhat,
        [&](CompoundEncoder& c) {
          c.putFh(st.fh);
          c.setAttr(st.stateId, nfs4::SetAttributes{0, std::nullopt});
        },
        [&](CompoundDecoder& d) { return setAttrReply(d, 0, what, truncateWhat); }));
    st.sizeAtOpen = 0;
  } catch (...) {
    try {
      close(file);
    } catch (...) {  // the truncate error is the one to report
    }
    throw;
  }
}

OpenFile ClientImpl::open(std::string_view path, const OpenFlags& flags) {
  PathParts parts = split(path, true, "open");
  auto st = std::make_shared<OpenFile::State>();
  st->path = fullPath(path);
  nfs4::OpenArgs args;
  args.clientId = session_->clientId();
  st->owner = openOwner_ + ":" + std::to_string(opens_.fetch_add(1, std::memory_order_relaxed));
  args.owner = {reinterpret_cast<const std::uint8_t*>(st->owner.data()), st->owner.size()};
  args.shareAccess = (flags.write ? (flags.read ? nfs4::kShareAccessBoth : nfs4::kShareAccessWrite)
                                  : nfs4::kShareAccessRead) |
                     nfs4::kShareAccessWantNoDeleg;
  st->shareAccess = args.shareAccess;
  args.create = flags.create;
  args.createAttrs.mode = flags.mode;
  if (flags.create && flags.truncate) args.createAttrs.size = 0;
  // "f/" names a directory, which OPEN cannot open.
  if (parts.trailingSlash) refuseOpenOfDirectory(path, parts);
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
  remember(st);
  OpenFile f;
  f.state_ = st;
  if (flags.truncate && !flags.create) truncateOpened(f, parts.full);
  return f;
}

void ClientImpl::close(OpenFile& file) {
  if (!file.state_) return;
  OpenFile::State& st = *file.state_;
  const std::string what = "close " + st.path;
  bool unstable;
  {
    std::lock_guard lock(st.mu);
    if (st.closing) return;
    st.closing = true;
    unstable = st.unstable.owed();
  }
  // CLOSE even when COMMIT fails (the open state must not leak), then report the COMMIT failure.
  std::exception_ptr commitFailure;
  if (unstable) {
    try {
      commitAndCheck(file.state_, what);
    } catch (...) {
      commitFailure = std::current_exception();
    }
  }
  Error e = run(
      what,
      [&](CompoundEncoder& c) {
        c.putFh(st.fh);
        c.close(st.stateId);
        if (holdsDelegation(st.delegationType)) c.delegReturn(st.delegation);
      },
      [&](CompoundDecoder& d) -> Error {
        if (Error x = expectOk(d, Op::kPutFh, what)) return x;
        if (Error x = expectOk(d, Op::kClose, what)) return x;
        (void)d.close();
        if (holdsDelegation(st.delegationType)) {
          if (Error x = expectOk(d, Op::kDelegReturn, what)) return x;
        }
        return {};
      });
  {
    std::lock_guard lock(st.mu);
    st.closed = true;
  }
  if (commitFailure) std::rethrow_exception(commitFailure);
  check(e);
}

Attributes ClientImpl::statParts(const PathParts& parts) {
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

Attributes ClientImpl::stat(std::string_view path) {
  const PathParts parts = split(path, false, "stat");
  Attributes out;
  throughAllLinks(parts, [&](const PathParts& p) {
    out = statParts(p);
    return out.type;
  });
  return out;
}

Attributes ClientImpl::lstat(std::string_view path) {
  const PathParts parts = split(path, false, "lstat");
  Attributes out;
  throughLinks(parts, Follow::kDirectories, false, [&](const PathParts& p) { out = statParts(p); });
  return out;
}

std::string ClientImpl::readlink(std::string_view path) {
  const PathParts parts = split(path, false, "readlink");
  std::string out;
  throughLinks(parts, Follow::kDirectories, false,
               [&](const PathParts& p) { out = readLinkParts(p); });
  return out;
}

void ClientImpl::requireDirectory(std::string_view path, const std::string& what) {
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

nfs4::FileHandle ClientImpl::objectFh(std::string_view path, const char* what) {
  const PathParts parts = split(path, false, what);
  nfs4::FileHandle fh;
  throughAllLinks(parts, [&](const PathParts& p) {
    FileType type = FileType::kRegular;
    check(handleAndType(p, fh, type));
    return type;
  });
  return fh;
}

Attributes ClientImpl::fstat(const OpenFile& file) {
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

std::vector<DirectoryEntry> ClientImpl::readdir(std::string_view path) {
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

void ClientImpl::mkdir(std::string_view path, std::uint32_t mode) {
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

void ClientImpl::unlink(std::string_view path) {
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

void ClientImpl::renameParts(const PathParts& src, const PathParts& dst, const std::string& what) {
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
}

void ClientImpl::rename(std::string_view from, std::string_view to) {
  const std::string what = "rename " + fullPath(from) + " to " + fullPath(to);
  PathParts src0 = split(from, true, "rename");
  PathParts dst0 = split(to, true, "rename");
  src0.full = what;
  dst0.full = what;
  if (src0.trailingSlash || dst0.trailingSlash) requireDirectory(from, what);
  // As throughLinks, for two paths: either may have to be walked first, or
  // pass a link on the way.
  std::optional<PathParts> src;
  std::optional<PathParts> dst;
  if (mustWalk(src0)) src = resolveLinks(src0, Follow::kDirectories, false);
  if (mustWalk(dst0)) dst = resolveLinks(dst0, Follow::kDirectories, false);
  try {
    renameParts(src ? *src : src0, dst ? *dst : dst0, what);
  } catch (const NfsException& e) {
    if (!linkMayBeInTheWay(e)) throw;
    bool resolved = false;
    if (!src && (src = resolveLinks(src0, Follow::kDirectories, false))) resolved = true;
    if (!dst && (dst = resolveLinks(dst0, Follow::kDirectories, false))) resolved = true;
    if (!resolved) throw;
    renameParts(src ? *src : src0, dst ? *dst : dst0, what);
  }
}

void ClientImpl::setAttrsAt(std::string_view path, const char* call,
                            const nfs4::SetAttributes& attrs) {
  // SETATTR on a link would change the link: the object is found first.
  const nfs4::FileHandle fh = objectFh(path, call);
  const std::string what = std::string(call) + " " + fullPath(path);
  check(run(
      what,
      [&](CompoundEncoder& c) {
        c.putFh(fh);
        c.setAttr(nfs4::StateId{}, attrs);  // anonymous stateid
      },
      [&](CompoundDecoder& d) { return setAttrReply(d, 0, what, what); }));
}

void ClientImpl::truncate(std::string_view path, std::uint64_t size) {
  setAttrsAt(path, "truncate", nfs4::SetAttributes{size, std::nullopt});
}

void ClientImpl::chmod(std::string_view path, std::uint32_t mode) {
  setAttrsAt(path, "chmod", nfs4::SetAttributes{std::nullopt, mode});
}

}  // namespace nfsrdma
