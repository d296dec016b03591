#include "client/mount/MountHost.h"

#include <sys/utsname.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace nfsrdma::mount {
namespace {

std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

HostFacts readHostFacts(const std::filesystem::path& root) {
  HostFacts f;
  f.mounts = readFile(root / "proc/mounts");
  f.rdmaClientModule = std::filesystem::exists(root / "sys/module/rpcrdma") ||
                       std::filesystem::exists(root / "sys/module/xprtrdma");
  utsname u{};
  if (::uname(&u) == 0) std::sscanf(u.release, "%d.%d", &f.kernelMajor, &f.kernelMinor);
  return f;
}

}  // namespace nfsrdma::mount
