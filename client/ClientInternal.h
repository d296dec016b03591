// Private to the files that implement nfsrdma::Client (client/Client*.cpp):
// what more than one of them needs. Client.h stays the one header users
// include, so nothing here is part of the API.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/Client.h"
#include "client/nfs4/Compound.h"
#include "client/nfs4/Nfs4Constants.h"
#include "client/nfs4/Nfs4Status.h"

namespace nfsrdma {

// A path as the COMPOUNDs that name it see it (split() makes one, and
// resolveLinks() one with its symbolic links followed).
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
void refuseLongNames(const char* what, const std::string& path, const std::vector<std::string_view>& comps);

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
