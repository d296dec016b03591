// How a user's path becomes what a COMPOUND names: split into LOOKUPs,
// and walked one name at a time when a symbolic link or ".." is on the way
// (servers do not follow links for us). Every namespace call goes through
// here, so POSIX's rules for links live in one place.
#include <algorithm>
#include <cerrno>
#include <deque>

#include "client/ClientInternal.h"

namespace nfsrdma {

using namespace client_detail;  // ClientInternal.h

namespace client_detail {

// PATH_MAX and NAME_MAX, as the kernel client refuses longer ones
// (ENAMETOOLONG) before anything goes to the server: a longer path would
// otherwise end in a request larger than the session allows, naming
// neither the path nor its length. Names are bounded by every server we
// know (knfsd and nfs-ganesha take 255 bytes).
constexpr std::size_t kMaxPath = 4096;
constexpr std::size_t kMaxName = 255;

namespace {

// "what /export/aaaa...": a path too long to print whole.
std::string named(const char* what, const std::string& path) {
  constexpr std::size_t kShown = 64;
  return std::string(what) + " " + (path.size() <= kShown ? path : path.substr(0, kShown) + "...");
}

}  // namespace

void refuseLongNames(const char* what, const std::string& path,
                     const std::vector<std::string_view>& comps) {
  if (path.size() > kMaxPath) {
    throw NfsException(errnoError(
        ENAMETOOLONG, named(what, path) + ": a path of " + std::to_string(path.size()) +
                          " bytes, longer than " + std::to_string(kMaxPath) + " (PATH_MAX)"));
  }
  for (auto c : comps) {
    if (c.size() <= kMaxName) continue;
    throw NfsException(errnoError(
        ENAMETOOLONG, named(what, path) + ": a name of " + std::to_string(c.size()) +
                          " bytes, longer than " + std::to_string(kMaxName) + " (NAME_MAX)"));
  }
}

}  // namespace client_detail

ClientImpl::PathParts ClientImpl::split(std::string_view path, bool wantParent,
                                        const char* what) const {
  PathParts parts;
  const std::string full = fullPath(path);
  parts.lookups = pathComponents(path);
  refuseLongNames(what, full, parts.lookups);
  parts.full = std::string(what) + " " + full;
  parts.wantParent = wantParent;
  // "." is dropped here. ".." is not a name a server looks up
  // (NFS4ERR_BADNAME): a path with one is walked component by component, so
  // that it goes back from where a symbolic link before it led, as in POSIX.
  parts.physical =
      std::find(parts.lookups.begin(), parts.lookups.end(), "..") != parts.lookups.end();
  // "d/" and "d/." name a directory: a link there is followed even by lstat.
  parts.trailingSlash = !parts.lookups.empty() && (path.back() == '/' || path.ends_with("/."));
  if (wantParent) {
    // An entry is named by its own name: "d/." and "d/.." name d and its
    // parent, which rmdir(2) and rename(2) refuse as well.
    const bool endsInDot = path == "." || path.ends_with("/.");
    if (parts.lookups.empty() || parts.lookups.back() == ".." || endsInDot) {
      throw NfsException(
          makeError(ClientErrc::kInvalidArgument,
                    parts.full + ": expected a path naming an entry below the export"));
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

void ClientImpl::lookupAll(CompoundEncoder& c, const nfs4::FileHandle& root,
                           const PathParts& parts) {
  c.putFh(parts.base ? *parts.base : root);
  for (auto comp : parts.lookups) c.lookup(comp);
}

Error ClientImpl::handleAndType(const PathParts& parts, nfs4::FileHandle& fh, FileType& type) {
  return run(
      parts.full,
      [&](CompoundEncoder& c) {
        lookupAll(c, root_, parts);
        c.getFh();
        c.getAttr(nfs4::Bitmap{nfs4::attr::kType});
      },
      [&](CompoundDecoder& d) -> Error {
        if (Error e = expectLookups(d, parts.lookups.size(), parts.full)) return e;
        if (Error e = expectOk(d, Op::kGetFh, parts.full)) return e;
        fh = d.getFh();
        if (Error e = expectOk(d, Op::kGetAttr, parts.full)) return e;
        type = d.getAttr().type;
        return d.ok() ? Error{} : malformedReply(d, parts.full);
      });
}

std::string ClientImpl::readLinkParts(const PathParts& parts) {
  std::string out;
  check(run(
      parts.full,
      [&](CompoundEncoder& c) {
        lookupAll(c, root_, parts);
        c.readLink();
      },
      [&](CompoundDecoder& d) -> Error {
        if (Error e = expectLookups(d, parts.lookups.size(), parts.full)) return e;
        if (Error e = expectOk(d, Op::kReadLink, parts.full)) return e;
        out = d.readLink();
        return d.ok() ? Error{} : malformedReply(d, parts.full);
      },
      readLinkHints()));
  return out;
}

std::vector<std::string> ClientImpl::linkTarget(const nfs4::FileHandle& link,
                                                const std::string& name, const std::string& what,
                                                unsigned& links,
                                                std::vector<nfs4::FileHandle>& dirs) {
  if (++links > kMaxSymlinks) {
    check(makeError(
        std::make_error_code(std::errc::too_many_symbolic_link_levels),
        what + ": more than " + std::to_string(kMaxSymlinks) + " symbolic links on the way"));
  }
  PathParts at;
  at.full = what;
  at.base = link;
  const std::string text = readLinkParts(at);
  std::vector<std::string_view> comps = pathComponents(text);
  if (!text.empty() && text.front() == '/') {
    // The server's namespace: the target must lie in this export, whose
    // root is all the walk can stand on.
    const std::vector<std::string_view> exportComps = pathComponents(options_.exportPath);
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
  return {comps.begin(), comps.end()};
}

namespace {

// Links of up to kMaxLinkText bytes could make a walk long: a bound on its
// round trips, far above any real path.
void checkWalkLength(unsigned steps, const std::string& what) {
  constexpr unsigned kMaxWalk = 4096;
  if (steps == kMaxWalk) {
    check(makeError(
        std::make_error_code(std::errc::filename_too_long),
        what + ": more than " + std::to_string(kMaxWalk) + " names to look up through its links"));
  }
}

// ".." in a walk: back to the directory before, never above the export's root.
void leaveDirectory(std::vector<nfs4::FileHandle>& dirs, const std::string& what) {
  if (dirs.size() == 1) {
    check(makeError(ClientErrc::kInvalidArgument, what + ": '..' leads above the export's root"));
  }
  dirs.pop_back();
}

}  // namespace

Error ClientImpl::lookupIn(const nfs4::FileHandle& dir, const std::string& name,
                           const std::string& what, nfs4::FileHandle& fh, FileType& type) {
  PathParts step;
  step.full = what;
  step.base = dir;
  step.lookups = {name};
  return handleAndType(step, fh, type);
}

std::optional<ClientImpl::PathParts> ClientImpl::resolveLinks(const PathParts& parts, Follow follow,
                                                              bool lastMayBeMissing) {
  const std::string& what = parts.full;
  std::deque<std::string> todo(parts.lookups.begin(), parts.lookups.end());
  if (parts.wantParent) todo.emplace_back(parts.leaf);
  // The caller runs its operation on what this returns, links or not.
  const bool force = mustWalk(parts);
  const bool followLast = follow == Follow::kAll || (parts.trailingSlash && !parts.wantParent);
  // dirs.back() is the directory the walk stands in; the ones before it are
  // where ".." goes back to.
  std::vector<nfs4::FileHandle> dirs{parts.base ? *parts.base : root_};
  unsigned links = 0;
  std::string leaf;
  for (unsigned steps = 0; !todo.empty(); ++steps) {
    checkWalkLength(steps, what);
    std::string name = std::move(todo.front());
    todo.pop_front();
    if (name == "..") {
      leaveDirectory(dirs, what);
      continue;
    }
    const bool last = todo.empty();
    if (last && !followLast) {
      leaf = std::move(name);
      break;
    }
    nfs4::FileHandle fh;
    FileType type = FileType::kNone;
    const Error e = lookupIn(dirs.back(), name, what, fh, type);
    if (e && last && lastMayBeMissing && e.code == nfs4::statusError(nfs4::kErrNoEnt)) {
      leaf = std::move(name);  // to be created
      break;
    }
    check(e);
    if (type == FileType::kSymlink) {
      const std::vector<std::string> target = linkTarget(fh, name, what, links, dirs);
      todo.insert(todo.begin(), target.begin(), target.end());
      continue;
    }
    if (last) {
      if (parts.trailingSlash && !parts.wantParent && type != FileType::kDirectory) {
        check(makeError(nfs4::statusError(nfs4::kErrNotDir),
                        what + " (a path that ends in '/' names a directory)"));
      }
      leaf = std::move(name);
      break;
    }
    if (type != FileType::kDirectory) {
      if (links == 0 && !force) return std::nullopt;  // the caller's own error says it
      check(makeError(nfs4::statusError(nfs4::kErrNotDir),
                      what + ": '" + name + "' is not a directory"));
    }
    dirs.push_back(std::move(fh));
  }
  if (links == 0 && !force) return std::nullopt;
  return walkedTo(parts, std::move(dirs.back()), std::move(leaf));
}

ClientImpl::PathParts ClientImpl::walkedTo(const PathParts& parts, nfs4::FileHandle dir,
                                           std::string leaf) {
  PathParts out;
  out.full = parts.full;
  out.wantParent = parts.wantParent;
  out.base = std::move(dir);
  out.owned = std::make_shared<const std::string>(std::move(leaf));
  // An empty leaf: the path ended in a directory (a link to "..", say).
  if (out.wantParent) {
    out.leaf = *out.owned;
  } else if (!out.owned->empty()) {
    out.lookups.push_back(*out.owned);
  }
  return out;
}

bool ClientImpl::mustWalk(const PathParts& parts) {
  // "x/" must also be found to be a directory, which only the walk checks.
  return parts.physical || (parts.trailingSlash && !parts.wantParent);
}

void ClientImpl::throughLinks(const PathParts& parts, Follow follow, bool lastMayBeMissing,
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

void ClientImpl::throughAllLinks(const PathParts& parts,
                                 const std::function<FileType(const PathParts&)>& op) {
  FileType type = FileType::kRegular;
  throughLinks(parts, Follow::kAll, false, [&](const PathParts& p) { type = op(p); });
  // GETATTR describes a link itself: one as the last component is followed now.
  if (type == FileType::kSymlink) {
    if (std::optional<PathParts> resolved = resolveLinks(parts, Follow::kAll, false)) op(*resolved);
  }
}

}  // namespace nfsrdma
