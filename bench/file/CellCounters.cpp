#include "bench/file/CellCounters.h"

#include <unistd.h>

#include <memory>
#include <string>
#include <utility>

#include "counters/EthtoolStats.h"
#include "counters/HostCounters.h"

namespace nfsrdma::bench {
namespace fs = std::filesystem;
using counters::CounterSource;
using counters::NamedValues;

namespace {

long ticksPerSecond() {
  const long hz = ::sysconf(_SC_CLK_TCK);
  return hz > 0 ? hz : 100;
}

void addNetworkSources(std::vector<CounterSource>& out, const fs::path& root) {
  for (const auto& port : counters::rdmaPorts(root)) {
    out.push_back({"rdma:" + port,
                   {},
                   [files = std::make_shared<const counters::OpenCounters>(
                        counters::rdmaPortCounters(root, port))] { return files->read(); }});
  }
  for (const auto& netdev : counters::rdmaNetdevs(root)) {
    // The driver's own counters (ethtool -S) come from an ioctl on this
    // host's netdev: only when the root is this host's.
    std::shared_ptr<const counters::EthtoolStats> driver;
    if (root == "/") {
      driver =
          std::make_shared<const counters::EthtoolStats>(netdev, counters::ethtoolCounterWanted);
    }
    auto files =
        std::make_shared<const counters::OpenCounters>(counters::netdevCounters(root, netdev));
    out.push_back({"net:" + netdev, {}, [files, driver]() -> std::optional<NamedValues> {
                     auto v = files->read();
                     const auto extra = driver ? driver->read() : std::nullopt;
                     if (!extra) return v;
                     if (!v) v.emplace();
                     v->values.insert(v->values.end(), extra->values.begin(), extra->values.end());
                     return v;
                   }});
  }
}

// nfsd's sources read nothing on a host without nfsd; with it they are
// this host's server, which is the server of the cell when it is local.
void addServerSources(std::vector<CounterSource>& out, const fs::path& root, long hz) {
  out.push_back({"nfsd-pool", {"pools"}, [root] { return counters::readNfsdPools(root); }});
  auto nfsd = std::make_shared<counters::ThreadCounters>(root, "", hz);
  out.push_back({"nfsd-threads", {"threads", "busy", "hz"}, [nfsd] { return nfsd->read(); }});
  auto svc = std::make_shared<const counters::OpenCounters>(counters::svcRdmaCounters(root));
  out.push_back({"svcrdma", {"max_requests"}, [svc] { return svc->read(); }});
}

}  // namespace

NamedValues clientValues(const ClientLive& l, std::uint32_t wanted) {
  NamedValues v;
  const auto put = [&](const char* name, std::uint64_t x) {
    v.values.emplace_back(name, static_cast<std::int64_t>(x));
  };
  put("calls", l.calls);
  put("replies", l.replies);
  put("timeouts", l.timeouts);
  put("reconnects", l.reconnects);
  put("connections_lost", l.connectionsLost);
  put("slot_waits", l.slotWaits);
  put("retransmits", l.replayed);
  put("wanted", wanted);
  const std::uint64_t answered = l.replies + l.timeouts;
  put("in_flight", l.calls > answered ? l.calls - answered : 0);
  put("credits", l.credits);
  put("slots", l.slots);
  return v;
}

std::vector<CounterSource> cellSources(const TargetSpec& target,
                                       std::function<std::optional<ClientLive>()> client,
                                       std::uint32_t wanted, const fs::path& root) {
  const long hz = ticksPerSecond();
  std::vector<CounterSource> out;
  if (target.engine == EngineKind::Nfs && client) {
    out.push_back({"client",
                   {"wanted", "in_flight", "credits", "slots"},
                   [client = std::move(client), wanted]() -> std::optional<NamedValues> {
                     const auto l = client();
                     if (!l) return std::nullopt;
                     return clientValues(*l, wanted);
                   }});
  }
  if (target.engine == EngineKind::Path && target.onNfs) {
    if (const auto mount = counters::nfsMountOf(root, target.location)) {
      out.push_back({"mountstats:" + *mount, {}, [root, mount = *mount] {
                       return counters::readMountCounters(root, mount);
                     }});
    }
  }
  if (target.overNfs()) {
    addNetworkSources(out, root);
    addServerSources(out, root, hz);
  }
  out.push_back(
      {"host-cpu", {"cpus", "hz"}, [root, hz] { return counters::readHostCpu(root, hz); }});
  auto self = std::make_shared<counters::ThreadCounters>(root, "self", hz);
  out.push_back({"bench-threads", {"threads", "hz"}, [self] { return self->read(); }});
  return out;
}

}  // namespace nfsrdma::bench
