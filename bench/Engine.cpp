#include "bench/Engine.h"

#include <sys/vfs.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace nfsrdma::bench {

std::unique_ptr<Engine> makeNfsEngine(const TargetSpec& target);     // EngineNfs.cpp
std::unique_ptr<Engine> makeLibnfsEngine(const TargetSpec& target);  // EngineLibnfs.cpp
std::unique_ptr<Engine> makePathEngine(const TargetSpec& target);    // EnginePath.cpp

namespace {

// True when the URL's query has the key, e.g. "qd" in nfs://h/e?proto=tcp&qd=64.
bool urlHasKey(const std::string& url, const std::string& key) {
  const auto q = url.find('?');
  if (q == std::string::npos) return false;
  std::istringstream in(url.substr(q + 1));
  for (std::string kv; std::getline(in, kv, '&');) {
    if (kv.substr(0, kv.find('=')) == key) return true;
  }
  return false;
}

}  // namespace

void Engine::remove(const std::vector<std::string>& files) {
  if (!files.empty()) throw std::runtime_error("this engine cannot remove " + files.front());
}

const char* engineName(EngineKind k) {
  switch (k) {
    case EngineKind::Nfs: return "nfs";
    case EngineKind::Libnfs: return "libnfs";
    case EngineKind::Path: return "path";
  }
  return "?";
}

TargetSpec TargetSpec::parse(const std::string& name, const std::string& spec) {
  TargetSpec t;
  const auto colon = spec.find(':');
  const std::string engine = spec.substr(0, colon);
  if (colon == std::string::npos || colon + 1 >= spec.size()) {
    throw std::invalid_argument("target '" + spec + "': expected nfs:URL, libnfs:URL or path:DIR");
  }
  t.location = spec.substr(colon + 1);
  if (engine == "nfs" || engine == "libnfs") {
    t.engine = engine == "nfs" ? EngineKind::Nfs : EngineKind::Libnfs;
    t.nfs = ClientOptions::fromUrl(t.location);
    t.queueDepthGiven = urlHasKey(t.location, "qd");
    if (t.engine == EngineKind::Libnfs && t.nfs.proto != "tcp") {
      throw std::invalid_argument("target '" + spec + "': libnfs speaks TCP only");
    }
    t.name = name.empty() ? (t.engine == EngineKind::Nfs ? "nfs-" + t.nfs.proto : std::string("libnfs")) : name;
  } else if (engine == "path") {
    t.engine = EngineKind::Path;
    t.name = name.empty() ? "path" : name;
    t.onNfs = pathIsOnNfs(t.location);
    t.localDir = t.location;
    if (t.onNfs) t.mountProto = nfsMountProto(t.location);
  } else {
    throw std::invalid_argument("target '" + spec + "': unknown engine '" + engine + "' (nfs, libnfs, path)");
  }
  return t;
}

bool TargetSpec::serverIsLocal() const {
  if (engine == EngineKind::Path) return !onNfs;
  return nfs.host == "127.0.0.1" || nfs.host == "localhost" || nfs.host == "::1";
}

std::string TargetSpec::describe() const {
  if (engine == EngineKind::Path) {
    return std::string("path ") + location + (onNfs ? " on NFS (proto=" + mountProto + ")" : std::string()) +
           (direct ? " (O_DIRECT, io_uring)" : " (buffered, io_uring)");
  }
  if (engine == EngineKind::Libnfs) return "libnfs NFSv4.0 " + nfs.url() + " (async API, one context per job)";
  return "nfs NFSv4.1 " + nfs.url() + " proto=" + nfs.proto +
         (nfs.readsPerCompound > 1 ? " reads-per-compound=" + std::to_string(nfs.readsPerCompound) : std::string()) +
         " (our client, one connection per job)";
}

bool pathIsOnNfs(const std::string& dir) {
  struct statfs st {};
  return ::statfs(dir.c_str(), &st) == 0 && static_cast<long>(st.f_type) == kNfsSuperMagic;
}

std::string nfsMountProto(const std::string& dir) {
  std::error_code ec;
  const std::string where = std::filesystem::weakly_canonical(dir, ec).string();
  std::ifstream mounts("/proc/self/mounts");
  std::string line, best, proto = "tcp";
  while (std::getline(mounts, line)) {
    std::istringstream in(line);
    std::string source, point, type, opts;
    if (!(in >> source >> point >> type >> opts) || type.rfind("nfs", 0) != 0) continue;
    const bool under = where == point || (where.rfind(point, 0) == 0 && (point == "/" || where[point.size()] == '/'));
    if (!under || point.size() < best.size()) continue;
    best = point;
    proto = "tcp";
    std::istringstream os(opts);
    for (std::string o; std::getline(os, o, ',');) {
      if (o.rfind("proto=", 0) == 0) proto = o.substr(6);
    }
  }
  return proto.rfind("rdma", 0) == 0 ? "rdma" : "tcp";
}

std::unique_ptr<Engine> makeEngine(const TargetSpec& target) {
  switch (target.engine) {
    case EngineKind::Nfs: return makeNfsEngine(target);
    case EngineKind::Libnfs: return makeLibnfsEngine(target);
    case EngineKind::Path: return makePathEngine(target);
  }
  throw std::logic_error("unknown engine");
}

}  // namespace nfsrdma::bench
