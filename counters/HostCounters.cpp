#include "counters/HostCounters.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <system_error>

#include "counters/CpuStat.h"
#include "counters/MountStats.h"
#include "counters/PoolStats.h"
#include "counters/TextFields.h"
#include "util/UniqueFd.h"

namespace nfsrdma::counters {
namespace fs = std::filesystem;

namespace {

// Every port or device list here is bounded: a host with more is read in part.
constexpr std::size_t kMaxEntries = 64;

std::vector<std::string> entriesOf(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    names.push_back(e.path().filename().string());
    if (names.size() >= kMaxEntries) break;
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string firstLine(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

void add(NamedValues& to, const std::string& name, std::uint64_t v) {
  to.values.emplace_back(name, static_cast<std::int64_t>(v));
}

// The fields of every transport of a mount, summed by name (nconnect=N has N).
void addXprts(NamedValues& out, const NfsMountStats& m) {
  NamedValues sum;
  for (const auto& x : m.xprts) {
    for (const auto& field : x.fields.values) {
      auto it = std::find_if(sum.values.begin(), sum.values.end(),
                             [&](const auto& p) { return p.first == field.first; });
      if (it == sum.values.end()) {
        sum.values.push_back(field);
      } else {
        it->second += field.second;
      }
    }
  }
  out.values.insert(out.values.end(), sum.values.begin(), sum.values.end());
}

void addOps(NamedValues& out, const NfsMountStats& m) {
  for (const auto& [op, s] : m.ops) {
    if (s.ops == 0) continue;
    add(out, op + ".ops", s.ops);
    add(out, op + ".transmissions", s.transmissions);
    add(out, op + ".queue_ms", s.queueMs);
    add(out, op + ".rtt_ms", s.rttMs);
    add(out, op + ".execute_ms", s.executeMs);
    if (s.errors) add(out, op + ".errors", *s.errors);
  }
}

std::optional<std::vector<NfsMountStats>> mounts(const fs::path& root) {
  const auto text = readSmallFile(root / "proc/self/mountstats");
  if (!text) return std::nullopt;
  try {
    return parseMountStats(*text);
  } catch (const std::invalid_argument&) {
    return std::nullopt;  // a kernel's format we cannot read: not measured
  }
}

}  // namespace

// open, read, close: the sampler reads these four times a second, and a
// stream costs several times that in allocations and system calls.
std::optional<std::string> readSmallFile(const fs::path& file) {
  const UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return std::nullopt;
  std::string text;
  char buf[4096];
  for (int i = 0; i < 1024; ++i) {  // at most 4 MiB: a mountstats of many mounts
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) return std::nullopt;
    if (n == 0) return text;
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

std::vector<std::string> rdmaPorts(const fs::path& root) {
  std::vector<std::string> out;
  for (const auto& dev : entriesOf(root / "sys/class/infiniband")) {
    for (const auto& port : entriesOf(root / "sys/class/infiniband" / dev / "ports")) {
      if (out.size() < kMaxEntries) out.push_back(dev + "/" + port);
    }
  }
  return out;
}

std::vector<std::string> rdmaNetdevs(const fs::path& root) {
  std::set<std::string> found;
  for (const auto& port : rdmaPorts(root)) {
    const fs::path dev = root / "sys/class/infiniband" / port.substr(0, port.find('/'));
    for (const auto& gid :
         entriesOf(dev / "ports" / port.substr(port.find('/') + 1) / "gid_attrs/ndevs")) {
      const auto name =
          readSmallFile(dev / "ports" / port.substr(port.find('/') + 1) / "gid_attrs/ndevs" / gid);
      if (name && !firstLine(*name).empty()) found.insert(firstLine(*name));
    }
    if (const auto parent = readSmallFile(dev / "parent")) found.insert(firstLine(*parent));
  }
  found.erase("");
  return {found.begin(), found.end()};
}

std::optional<NamedValues> OpenCounters::read() const {
  NamedValues out;
  for (const auto& part : parts_) {
    const NamedValues v = part.read();
    out.values.insert(out.values.end(), v.values.begin(), v.values.end());
  }
  if (out.values.empty()) return std::nullopt;
  return out;
}

OpenCounters rdmaPortCounters(const fs::path& root, const std::string& port) {
  const fs::path dir = root / "sys/class/infiniband" / port.substr(0, port.find('/')) / "ports" /
                       port.substr(port.find('/') + 1);
  OpenCounters c;
  c.parts_.emplace_back(dir / "hw_counters", [](std::string_view n) { return n != "lifespan"; });
  c.parts_.emplace_back(dir / "counters");
  return c;
}

bool netdevCounterWanted(std::string_view name) {
  for (std::string_view n :
       {"rx_packets", "tx_packets", "rx_bytes", "tx_bytes", "rx_errors", "tx_errors", "rx_dropped",
        "tx_dropped", "rx_missed_errors", "rx_crc_errors", "rx_fifo_errors", "rx_over_errors"}) {
    if (name == n) return true;
  }
  return false;
}

OpenCounters netdevCounters(const fs::path& root, const std::string& netdev) {
  OpenCounters c;
  c.parts_.emplace_back(root / "sys/class/net" / netdev / "statistics", netdevCounterWanted);
  return c;
}

std::optional<NamedValues> readHostCpu(const fs::path& root, long hz) {
  const auto text = readSmallFile(root / "proc/stat");
  if (!text) return std::nullopt;
  std::vector<CpuTimes> cpus;
  try {
    cpus = parseProcStat(*text);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
  if (cpus.empty() || cpus[0].name != "cpu") return std::nullopt;
  const CpuTimes& c = cpus[0];
  NamedValues out;
  add(out, "user", c.user);
  add(out, "nice", c.nice);
  add(out, "system", c.system);
  add(out, "idle", c.idle);
  if (c.iowait) add(out, "iowait", *c.iowait);
  if (c.irq) add(out, "irq", *c.irq);
  if (c.softirq) add(out, "softirq", *c.softirq);
  if (c.steal) add(out, "steal", *c.steal);
  add(out, "cpus", cpus.size() - 1);
  add(out, "hz", static_cast<std::uint64_t>(hz));
  return out;
}

std::optional<NamedValues> readNfsdPools(const fs::path& root) {
  const auto text = readSmallFile(root / "proc/fs/nfsd/pool_stats");
  if (!text || text->empty()) return std::nullopt;
  std::vector<PoolStats> pools;
  try {
    pools = parsePoolStats(*text);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
  if (pools.empty()) return std::nullopt;
  std::uint64_t arrived = 0, enqueued = 0, woken = 0;
  for (const auto& p : pools) {
    arrived += p.packetsArrived;
    enqueued += p.socketsEnqueued;
    woken += p.threadsWoken;
  }
  NamedValues out;
  add(out, "packets-arrived", arrived);
  add(out, "sockets-enqueued", enqueued);
  add(out, "threads-woken", woken);
  add(out, "pools", pools.size());
  return out;
}

OpenCounters svcRdmaCounters(const fs::path& root) {
  OpenCounters c;
  c.parts_.emplace_back(root / "proc/sys/sunrpc/svc_rdma", [](std::string_view n) {
    return n.rfind("rdma_stat_", 0) == 0 || n == "max_requests";
  });
  return c;
}

std::optional<NamedValues> readMountCounters(const fs::path& root, const std::string& mountPoint) {
  const auto all = mounts(root);
  if (!all) return std::nullopt;
  for (const auto& m : *all) {
    if (m.mountPoint != mountPoint) continue;
    NamedValues out;
    addXprts(out, m);
    addOps(out, m);
    return out;
  }
  return std::nullopt;
}

std::optional<std::string> nfsMountOf(const fs::path& root, const std::string& path) {
  const auto all = mounts(root);
  if (!all) return std::nullopt;
  std::optional<std::string> best;
  for (const auto& m : *all) {
    const std::string& mp = m.mountPoint;
    const bool under =
        path == mp || mp == "/" ||
        (path.rfind(mp, 0) == 0 && path.size() > mp.size() && path[mp.size()] == '/');
    if (under && (!best || mp.size() > best->size())) best = mp;
  }
  return best;
}

}  // namespace nfsrdma::counters
