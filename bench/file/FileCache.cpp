// FileCache: the server's page cache dropped, warmed or left as it is.
#include "bench/file/FileCache.h"

#include <unistd.h>

#include <fstream>

#include "bench/file/FileLayout.h"

namespace nfsrdma::bench {

const char* serverCacheName(ServerCache c) {
  switch (c) {
    case ServerCache::Unmanaged:
      return "unmanaged";
    case ServerCache::Dropped:
      return "dropped";
    case ServerCache::Warm:
      return "warm";
  }
  return "?";
}

std::string dropLocalPageCache() {
  ::sync();
  std::ofstream f("/proc/sys/vm/drop_caches");
  if (!f) return "cannot open /proc/sys/vm/drop_caches (needs root)";
  f << "1\n";
  f.flush();
  if (!f) return "writing /proc/sys/vm/drop_caches failed";
  return {};
}

namespace {

using filerun::readWholeFileSet;

// Drops the page cache of the target's server when it is this host; notes
// what happened, and in detail what the cache now is ("drop failed: ..." unless dropped).
ServerCache dropServerCache(const TargetSpec& target, std::vector<std::string>& notes,
                            std::string& detail) {
  if (target.engine == EngineKind::Path && target.onNfs) {
    // The server of an NFS mount is elsewhere: only this host's cache (the NFS client's) can go.
    const auto why = dropLocalPageCache();
    notes.push_back(
        why.empty() ? "--drop-server-cache: " + target.location +
                          " is on NFS: dropped this host's page cache (the NFS client's), not the "
                          "server's (drop it on the server)"
                    : "--drop-server-cache: " + target.location + " is on NFS; " + why);
    detail =
        "drop failed: " + target.location + " is on NFS and its server is not this host" +
        (why.empty() ? " (this host's page cache, the NFS client's, was dropped)" : "; " + why);
    return ServerCache::Unmanaged;
  }
  if (!target.serverIsLocal()) {
    notes.push_back("--drop-server-cache: server " + target.nfs.host +
                    " is not on this host; caches not dropped (run the bench on the server or drop "
                    "them there)");
    detail = "drop failed: server " + target.nfs.host + " is not on this host";
    return ServerCache::Unmanaged;
  }
  if (auto why = dropLocalPageCache(); !why.empty()) {
    notes.push_back("--drop-server-cache: " + why);
    detail = "drop failed: " + why;
    return ServerCache::Unmanaged;
  }
  notes.push_back("server page cache dropped before the read phase");
  detail = "dropped";
  return ServerCache::Dropped;
}

// Reads the whole file set once, untimed, so the read phase starts with it in
// the server's page cache. A path target not on NFS is read buffered (its
// page cache is the server's when it is the export's disk); an NFS mount
// with O_DIRECT, so the NFS client's cache stays as it was.
ServerCache warmServerCache(const TargetSpec& given, const FileOptions& o,
                            std::vector<std::string>& notes) {
  TargetSpec target = given;
  if (target.engine == EngineKind::Path) target.direct = target.onNfs;
  FileOptions w = o;
  w.verify = false;
  constexpr std::uint32_t kWarmBlock = 128 * 1024;
  const std::uint32_t block = fileBytes(o, kWarmBlock) > 0 ? kWarmBlock : kVerifyUnit;
  readWholeFileSet(target, w, block, 8, "warming the server's cache");
  notes.push_back("server page cache warmed before the read phase: the file set (" +
                  formatBytes(static_cast<double>(o.workingSetBytes())) + ") read once, untimed");
  return ServerCache::Warm;
}

}  // namespace

namespace filerun {

void prepareServerCache(RunResult& result, const TargetSpec& target, const FileProfile& profile,
                        const FileOptions& options, const RunSettings& settings, bool laidOut) {
  if (!profile.reads()) {
    result.serverCacheDetail = "n/a: no reads";
    return;
  }
  const bool drop = settings.cache == CachePrep::Drop ||
                    (settings.cache == CachePrep::FromOptions && options.dropServerCache);
  if (drop) {
    result.serverCache = dropServerCache(target, result.notes, result.serverCacheDetail);
  } else if (settings.cache == CachePrep::Warm) {
    result.serverCache = warmServerCache(target, options, result.notes);
    result.serverCacheDetail = serverCacheName(result.serverCache);
  } else {
    // Not a neutral state: the layout has just put (part of) the set where reads will find it.
    const std::string where = target.overNfs() ? "through the server and may be in its page cache"
                                               : "and may be in this host's page cache";
    result.serverCacheDetail =
        laidOut ? "unmanaged: the file set was just written " + where
                : "unmanaged: as earlier runs left it; the file set may be in the " +
                      std::string(target.overNfs() ? "server's" : "host's") + " page cache";
    result.notes.push_back("server cache " + result.serverCacheDetail +
                           " (--drop-server-cache drops it when the server is this host)");
  }
}

}  // namespace filerun

}  // namespace nfsrdma::bench
