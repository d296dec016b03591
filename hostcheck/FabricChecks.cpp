// FabricChecks: the RoCE fabric as the host sees it. A knob the driver does
// not expose (ECN and trust are NVIDIA OFED's sysfs, not upstream's) is a
// PASS saying so, never a FAIL: the host is not wrong for lacking it.
#include "hostcheck/FabricChecks.h"

#include <sys/stat.h>

#include <sstream>

namespace nfsrdma::hostcheck {
namespace fs = std::filesystem;

namespace {

const fs::path kNet = "/sys/class/net";
const fs::path kRdmaCm = "/sys/kernel/config/rdma_cm";

// Where findTool looks, in this order.
constexpr const char* kToolDirs[] = {"/usr/sbin", "/sbin", "/usr/bin", "/bin", "/usr/local/sbin"};

std::string joined(const std::vector<std::string>& words, const char* sep = ", ") {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : sep) + w;
  return out;
}

// What a 4 KiB page costs in packets at an RDMA MTU below 4096.
std::string mtuCost(unsigned activeMtu) {
  const unsigned packets = (4096 + activeMtu - 1) / activeMtu;
  return "every 4 KiB of data is " + std::to_string(packets) +
         " RoCE packets, each with its own headers and ACK work";
}

}  // namespace

std::string findTool(const HostRoot& root, const std::string& name) {
  for (const char* dir : kToolDirs) {
    const std::string host = std::string(dir) + "/" + name;
    struct stat st {};
    if (::stat(root.at(host).c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111))
      return host;
  }
  return "";
}

void checkRoceGid(const RdmaPortInfo& port, CheckList& out) {
  std::vector<std::string> v2;
  for (const auto& g : port.gids) {
    if (g.type == "RoCE v2" && !g.ip.empty())
      v2.push_back(g.ip + " (index " + std::to_string(g.index) + ", " + g.netdev + ")");
  }
  const std::string name = port.name() + " RoCE v2 GID";
  if (!v2.empty()) {
    out.pass(name, joined(v2));
  } else {
    const std::string nd = port.netdev().empty() ? "<netdev>" : port.netdev();
    out.fail(
        name, "no RoCE v2 GID carries an IP address: rdma_cm cannot reach this port",
        "ip addr add <ip>/<prefix> dev " + nd + "  # the GID table follows the netdev's addresses");
  }
}

unsigned rocePathMtu(long long netdevMtu) {
  const long long room = netdevMtu - kRoceHeaderBytes;
  for (unsigned mtu : {4096u, 2048u, 1024u, 512u, 256u}) {
    if (room >= mtu) return mtu;
  }
  return 0;
}

void checkMtu(const HostRoot& root, const RdmaPortInfo& port, CheckList& out) {
  const std::string nd = port.netdev();
  const std::string name = port.name() + " MTU";
  const auto netMtu = nd.empty() ? std::nullopt : root.readNumber(kNet / nd / "mtu");
  if (!netMtu) {
    out.pass(name, "not checked: no netdev mtu to read");
    return;
  }
  const unsigned path = rocePathMtu(*netMtu);
  const std::string found =
      nd + " mtu " + std::to_string(*netMtu) + ", RoCE path MTU " + std::to_string(path);
  const std::string gives =
      "a netdev mtu of " + std::to_string(4096 + kRoceHeaderBytes) + " or more gives 4096";
  if (path == 0) {
    out.fail(name, found + ": no RoCE MTU fits the netdev",
             "ip link set " + nd + " mtu 1500  # " + gives);
  } else if (path < 4096) {
    out.pass(name, found + " (fine, but " + mtuCost(path) + "; " + gives +
                       ", on every host and switch port of the path)");
  } else {
    out.pass(name, found);
  }
}

void checkRoceTos(const HostRoot& root, const RdmaPortInfo& port, CheckList& out) {
  const fs::path dir = kRdmaCm / port.device / "ports" / std::to_string(port.number);
  const std::string file = (dir / "default_roce_tos").string();
  const std::string set = "echo " + std::to_string(kRoceTos) + " > " + file;
  const std::string name = port.name() + " default_roce_tos";
  const auto tos = root.readNumber(dir / "default_roce_tos");
  if (tos && *tos != 0) {
    out.pass(name, std::to_string(*tos) + " (DSCP " + std::to_string(*tos >> 2) +
                       "): the kernel NFS client's and server's RDMA traffic is marked");
    return;
  }
  const std::string why =
      "the kernel NFS client and server never set a TOS, so their RoCE traffic goes out with "
      "DSCP 0, outside a lossless (PFC) or ECN class";
  if (tos) {
    out.warn(name, "0: " + why, set);
  } else if (root.exists(kRdmaCm)) {
    out.warn(name, "not set (no " + (kRdmaCm / port.device).string() + "): " + why,
             "mkdir " + (kRdmaCm / port.device).string() + " && " + set);
  } else {
    out.warn(name, "not set (no " + kRdmaCm.string() + "): " + why,
             "modprobe rdma_cm && (mountpoint -q /sys/kernel/config || mount -t configfs none "
             "/sys/kernel/config) && mkdir " +
                 (kRdmaCm / port.device).string() + " && " + set);
  }
}

void checkEcn(const HostRoot& root, const std::string& netdev, CheckList& out) {
  const fs::path ecn = kNet / netdev / "ecn";
  const std::string name = netdev + " ECN";
  if (!root.exists(ecn)) {
    out.pass(name, "not exposed by this driver (NVIDIA OFED's mlx5 has " + ecn.string() + ")");
    return;
  }
  std::vector<std::string> off;
  std::vector<std::string> on;
  for (const char* side : {"roce_np", "roce_rp"}) {
    std::vector<std::string> prios;
    for (const auto& prio : root.list(ecn / side / "enable")) {
      if (root.readNumber(ecn / side / "enable" / prio).value_or(0) == 1) prios.push_back(prio);
    }
    (prios.empty() ? off : on)
        .push_back(std::string(side) + (prios.empty() ? "" : " priority " + joined(prios, ",")));
  }
  if (off.empty()) {
    out.pass(name, "enabled: " + joined(on));
  } else {
    out.warn(name,
             "enabled on no priority for " + joined(off) +
                 ": congestion is met with drops or pause, not rate control",
             "echo 1 > " + (ecn / "roce_np" / "enable" / "3").string() + "; echo 1 > " +
                 (ecn / "roce_rp" / "enable" / "3").string() + "  # 3: the RoCE priority");
  }
}

void checkTrust(const HostRoot& root, const std::string& netdev, CheckList& out) {
  const fs::path trust = kNet / netdev / "qos" / "trust";
  const std::string name = netdev + " DSCP trust";
  const auto mode = root.read(trust);
  if (!mode) {
    out.pass(name, "not exposed by this driver (NVIDIA OFED's mlx5 has " + trust.string() + ")");
  } else if (*mode == "dscp") {
    out.pass(name, "dscp: the TOS picks the priority");
  } else {
    out.warn(name, "'" + *mode + "': the DSCP of default_roce_tos does not pick the priority",
             "mlnx_qos -i " + netdev + " --trust dscp");
  }
}

void checkPfc(const HostRoot& root, const std::string& netdev, CommandRunner* runner,
              CheckList& out) {
  const std::string name = netdev + " PFC";
  if (runner == nullptr) {
    out.pass(name, "not checked: no host command runs under --root");
    return;
  }
  const std::string dcb = findTool(root, "dcb");
  if (dcb.empty()) {
    out.warn(name, "could not be checked: no dcb program", "apt-get install iproute2");
    return;
  }
  const std::vector<std::string> argv = {dcb, "pfc", "show", "dev", netdev};
  const CommandResult r = runner->run(argv);
  if (r.exitStatus != 0) {
    out.pass(name,
             "no DCB on this netdev (" + shellJoin(argv) + ": " + trimmedText(r.output) + ")");
    return;
  }
  // "prio-pfc 0:off 1:off 2:off 3:on ..."
  std::istringstream words(r.output);
  std::vector<std::string> on;
  for (std::string w; words >> w;) {
    const auto colon = w.find(':');
    if (colon != std::string::npos && w.substr(colon + 1) == "on") on.push_back(w.substr(0, colon));
  }
  if (!on.empty()) {
    out.pass(name, "on for priority " + joined(on, ","));
  } else {
    out.warn(name, "off on every priority: a dropped RoCE packet costs a go-back-N retransmission",
             "dcb pfc set dev " + netdev + " prio-pfc 3:on  # and the switch ports");
  }
}

}  // namespace nfsrdma::hostcheck
