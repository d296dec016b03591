// FabricCounters: loss and error counters that have counted already, and
// fabricChecks, which runs every fabric check per port. A counter the
// driver does not have is not read as zero: only the names present count.
#include <set>

#include "counters/CounterDir.h"
#include "hostcheck/FabricChecks.h"

namespace nfsrdma::hostcheck {
namespace fs = std::filesystem;

namespace {

// netdev statistics/ that count lost or damaged frames.
const char* const kNetdevLoss[] = {"rx_errors",  "tx_errors",        "rx_dropped",
                                   "tx_dropped", "rx_missed_errors", "rx_crc_errors"};
// hw_counters that count retransmissions and sequence errors: rxe's
// (drivers/infiniband/sw/rxe/rxe_hw_counters.c) and mlx5's.
const char* const kRdmaLoss[] = {"out_of_seq_request",  "duplicate_request",     "rcvd_seq_err",
                                 "completer_retry_err", "retry_exceeded_err",    "out_of_sequence",
                                 "packet_seq_err",      "local_ack_timeout_err", "out_of_buffer"};

// "name=value" of the listed counters that are not zero, in the file order.
std::string nonZero(const counters::NamedValues& values, const char* const* names,
                    std::size_t count) {
  const std::set<std::string> wanted(names, names + count);
  std::string out;
  for (const auto& [name, value] : values.values) {
    if (value != 0 && wanted.count(name))
      out += (out.empty() ? "" : ", ") + name + "=" + std::to_string(value);
  }
  return out;
}

// What one counter check says: its texts and the counters it reads.
struct CounterCheck {
  std::string name;
  std::filesystem::path dir;  // a host path
  std::set<std::string> skip;
  const char* const* loss;
  std::size_t lossCount;
  std::string allZero;  // the PASS detail
  std::string counted;  // appended to the counted values
  std::string fix;
};

void checkCounters(const HostRoot& root, const CounterCheck& c, CheckList& out) {
  const auto read = counters::readCounterDir(root.at(c.dir), c.skip);
  if (read.counters.values.empty()) {
    out.pass(c.name, "none to read (no " + c.dir.string() + ")");
    return;
  }
  const std::string counted = nonZero(read.counters, c.loss, c.lossCount);
  if (counted.empty()) {
    out.pass(c.name, c.allZero);
  } else {
    out.warn(c.name, counted + c.counted, c.fix);
  }
}

}  // namespace

void checkNetdevCounters(const HostRoot& root, const std::string& netdev, CheckList& out) {
  checkCounters(root,
                {netdev + " error counters",
                 fs::path("/sys/class/net") / netdev / "statistics",
                 {},
                 kNetdevLoss,
                 std::size(kNetdevLoss),
                 "errors and drops all zero",
                 " (since the netdev came up)",
                 "ip -s link show " + netdev +
                     "  # rerun under load: growing drops point at ring sizes (ethtool -G), "
                     "pause or a lossy switch port"},
                out);
}

void checkPortCounters(const HostRoot& root, const RdmaPortInfo& port, CheckList& out) {
  const fs::path dir = fs::path("/sys/class/infiniband") / port.device / "ports" /
                       std::to_string(port.number) / "hw_counters";
  checkCounters(root,
                {port.name() + " loss counters",
                 dir,
                 {"lifespan"},
                 kRdmaLoss,
                 std::size(kRdmaLoss),
                 "no retransmission or sequence error counted",
                 ": packets were lost or reordered on the fabric",
                 "enable PFC or ECN on the RoCE priority and set default_roce_tos (see above); "
                 "watch " +
                     dir.string() + " under load"},
                out);
}

void fabricChecks(const HostRoot& root, const std::vector<RdmaPortInfo>& ports,
                  const FabricOptions& options, CheckList& out) {
  std::set<std::string> netdevsDone;
  for (const auto& port : ports) {
    const std::string netdev = port.netdev();
    if (port.roce()) {
      if (options.gids) checkRoceGid(port, out);
      checkMtu(root, port, out);
      checkRoceTos(root, port, out);
    }
    checkPortCounters(root, port, out);
    // Several RDMA ports may share a netdev (and its checks).
    if (!port.roce() || netdev.empty() || !netdevsDone.insert(netdev).second) continue;
    checkEcn(root, netdev, out);
    checkTrust(root, netdev, out);
    checkPfc(root, netdev, options.runner, out);
    checkNetdevCounters(root, netdev, out);
  }
}

}  // namespace nfsrdma::hostcheck
