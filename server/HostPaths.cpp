// HostPaths: the single place where host paths meet the --root prefix.
#include "server/HostPaths.h"

#include <stdexcept>

namespace nfsrdma::server {

HostPaths::HostPaths(std::filesystem::path root) : root_(std::move(root)) {
  if (!root_.is_absolute()) {
    throw std::invalid_argument("--root '" + root_.string() + "' must be an absolute path");
  }
  root_ = root_.lexically_normal();
  if (root_.native().size() > 1 && root_.native().back() == '/') root_ = root_.parent_path();
}

std::filesystem::path HostPaths::resolve(const std::filesystem::path& hostPath) const {
  if (!hostPath.is_absolute()) {
    throw std::invalid_argument("host path '" + hostPath.string() + "' must be absolute");
  }
  if (isLiveHost()) return hostPath.lexically_normal();
  return (root_ / hostPath.relative_path()).lexically_normal();
}

std::string HostPaths::display(const std::filesystem::path& hostPath) const {
  const std::string host = hostPath.lexically_normal().string();
  return isLiveHost() ? host : host + " (under --root " + root_.string() + ")";
}

Links HostPaths::linksFor(const std::filesystem::path& hostPath) {
  const std::filesystem::path p = hostPath.lexically_normal();
  if (p == kNfsConf) return Links::LastInRoot;
  for (const char* own : {"/etc/exports.d", kStateDir, "/proc"}) {
    if (isWithin(p, own)) return Links::Refuse;
  }
  return Links::InRoot;
}

bool HostPaths::isWithin(const std::filesystem::path& hostPath, const std::filesystem::path& dir) {
  const auto rel = hostPath.lexically_normal().lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

}  // namespace nfsrdma::server
