#include "client/transport/NumaPlacement.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

#include "util/ErrnoText.h"

namespace nfsrdma::transport {
namespace fs = std::filesystem;

namespace {

// An IPv4 or IPv6 address as inet_ntop writes it, without a port; "" for
// another family.
std::string addressText(const sockaddr* sa) {
  char text[INET6_ADDRSTRLEN] = {};
  const void* bytes = nullptr;
  if (sa->sa_family == AF_INET) {
    bytes = &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr;
  } else if (sa->sa_family == AF_INET6) {
    bytes = &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr;
  } else {
    return {};
  }
  return ::inet_ntop(sa->sa_family, bytes, text, sizeof text) != nullptr ? text : "";
}

}  // namespace

std::string interfaceOf(const std::string& ip) {
  ifaddrs* all = nullptr;
  if (::getifaddrs(&all) != 0) return {};
  std::string name;
  for (const ifaddrs* a = all; a != nullptr && name.empty(); a = a->ifa_next) {
    if (a->ifa_addr != nullptr && addressText(a->ifa_addr) == ip) name = a->ifa_name;
  }
  ::freeifaddrs(all);
  return name;
}

std::string NumaPlacement::statsField() const {
  return node >= 0 ? " numa=" + std::to_string(node) : " numa=none (" + detail + ")";
}

std::string localAddressOf(int fd) {
  sockaddr_storage local{};
  socklen_t len = sizeof local;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0) return {};
  return addressText(reinterpret_cast<const sockaddr*>(&local));
}

NumaPlacement pinThisThreadToNode(int node, const fs::path& sysfs) {
  NumaPlacement p;
  const fs::path list =
      sysfs / "devices" / "system" / "node" / ("node" + std::to_string(node)) / "cpulist";
  std::string text;
  std::getline(std::ifstream(list), text);  // parseCpuList takes the line as sysfs ends it
  const auto cpus = parseCpuList(text);
  if (!cpus || cpus->empty()) {
    p.detail = "node " + std::to_string(node) + ": cannot read its CPUs from " + list.string();
    return p;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : *cpus) CPU_SET(static_cast<std::size_t>(c), &set);
  if (::sched_setaffinity(0, sizeof set, &set) != 0) {
    p.detail = "node " + std::to_string(node) + " (cpus " + text +
               "): sched_setaffinity: " + util::errnoText(errno);
    return p;
  }
  p.node = node;
  p.detail = "node " + std::to_string(node) + " (cpus " + text + ")";
  return p;
}

NumaPlacement placeThisThread(std::optional<int> node, const std::string& what,
                              const fs::path& sysfs) {
  if (node) return pinThisThreadToNode(*node, sysfs);
  NumaPlacement p;
  p.detail = what + " has no NUMA node";
  return p;
}

}  // namespace nfsrdma::transport
