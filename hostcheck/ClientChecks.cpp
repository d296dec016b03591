// ClientChecks: the kernel NFS client's side of the path, from procfs and
// sysfs. A mount's read-ahead is its BDI's (/sys/class/bdi/MAJ:MIN), named
// by mountinfo's third field.
#include "hostcheck/ClientChecks.h"

#include <sstream>

namespace nfsrdma::hostcheck {
namespace fs = std::filesystem;

namespace {

// mountinfo's octal escapes ("\040" is a space) undone.
std::string unescaped(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool octal = s[i] == '\\' && i + 3 < s.size() &&
                       s.substr(i + 1, 3).find_first_not_of("01234567") == std::string::npos;
    if (octal) {
      out.push_back(static_cast<char>(std::stoi(s.substr(i + 1, 3), nullptr, 8)));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// The kernel's default read-ahead (VM_READAHEAD_PAGES, 128 KiB).
constexpr long long kDefaultReadAheadKb = 128;

void checkReadAhead(const HostRoot& root, const NfsMount& m, CheckList& out) {
  const fs::path file = fs::path("/sys/class/bdi") / m.device / "read_ahead_kb";
  const std::string name = "mount " + m.mountPoint + " read_ahead_kb";
  const auto kb = root.readNumber(file);
  if (!kb) {
    out.pass(name, "not checked: no " + file.string());
  } else if (*kb <= kDefaultReadAheadKb) {
    out.warn(name,
             std::to_string(*kb) +
                 " KiB: sequential reads over NFS wait for the server on every small "
                 "window",
             "echo 1024 > " + file.string() +
                 "  # lasts until unmount; for every mount: a udev rule on SUBSYSTEM==\"bdi\" "
                 "setting ATTR{read_ahead_kb}=\"1024\"");
  } else {
    out.pass(name, std::to_string(*kb) + " KiB");
  }
}

}  // namespace

std::vector<NfsMount> parseNfsMounts(const std::string& mountinfo) {
  std::vector<NfsMount> out;
  std::istringstream lines(mountinfo);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream f(line);
    std::vector<std::string> w;
    for (std::string word; f >> word;) w.push_back(word);
    std::size_t dash = 6;  // optional fields end at "-"
    while (dash < w.size() && w[dash] != "-") ++dash;
    if (dash + 2 >= w.size()) continue;  // no "- fstype source"
    const std::string& fstype = w[dash + 1];
    if (fstype != "nfs" && fstype != "nfs4") continue;
    out.push_back({unescaped(w[4]), unescaped(w[dash + 2]), fstype, w[2],
                   dash + 3 < w.size() ? w[dash + 3] : ""});
  }
  return out;
}

std::string mountOption(const std::string& options, const std::string& key) {
  std::istringstream in(options);
  for (std::string o; std::getline(in, o, ',');) {
    if (o.rfind(key + "=", 0) == 0) return o.substr(key.size() + 1);
  }
  return "";
}

void checkRpcRdma(const HostRoot& root, CheckList& out) {
  // xprtrdma: its name before Linux 4.17 merged it with svcrdma.
  if (root.exists("/sys/module/rpcrdma") || root.exists("/sys/module/xprtrdma")) {
    out.pass("module rpcrdma", "loaded");
  } else {
    out.warn("module rpcrdma",
             "not loaded: kernel mounts with proto=rdma fail (nfsrdma-client's own RDMA transport "
             "does not need it)",
             "modprobe rpcrdma");
  }
}

void checkMounts(const HostRoot& root, CheckList& out) {
  auto text = root.read("/proc/self/mountinfo");
  if (!text) {
    out.pass("NFS mounts", "not checked: no /proc/self/mountinfo");
    return;
  }
  const auto mounts = parseNfsMounts(*text);
  if (mounts.empty()) out.pass("NFS mounts", "none");
  for (const auto& m : mounts) {
    const std::string proto = mountOption(m.options, "proto");
    const std::string nconnect = mountOption(m.options, "nconnect");
    const std::string found =
        m.source + " " + m.fstype + " proto=" + (proto.empty() ? "?" : proto) +
        " nconnect=" + (nconnect.empty() ? "1" : nconnect) +
        " rsize=" + mountOption(m.options, "rsize") + " wsize=" + mountOption(m.options, "wsize");
    if (proto.rfind("rdma", 0) == 0) {
      out.pass("mount " + m.mountPoint, found);
    } else {
      out.warn("mount " + m.mountPoint, found + ": not over RDMA",
               "nfsrdma-client mount " + m.source + " " + m.mountPoint +
                   " --proto rdma  # after umount " + m.mountPoint);
    }
    checkReadAhead(root, m, out);
  }
}

void checkSessionSlots(const HostRoot& root, CheckList& out) {
  const auto slots = root.readNumber("/sys/module/nfs/parameters/max_session_slots");
  if (!slots) {
    out.pass("nfs max_session_slots", "not checked: the nfs module is not loaded");
  } else if (*slots < 64) {
    out.warn("nfs max_session_slots",
             std::to_string(*slots) + ": an NFSv4.1 mount has at most this many calls in flight",
             "echo 'options nfs max_session_slots=64' > /etc/modprobe.d/nfs.conf  # at the next "
             "load of nfs");
  } else {
    out.pass("nfs max_session_slots", std::to_string(*slots) + " calls in flight per session");
  }
}

void checkRdmaSlotTable(const HostRoot& root, CheckList& out) {
  const auto slots = root.readNumber("/proc/sys/sunrpc/rdma_slot_table_entries");
  if (!slots) {
    out.pass("rdma_slot_table_entries", "not checked: rpcrdma is not loaded");
  } else {
    out.pass("rdma_slot_table_entries", std::to_string(*slots) +
                                            " RPC-over-RDMA calls per connection (the server's "
                                            "credit grant caps it)");
  }
}

void checkRouteToServer(const std::vector<RdmaPortInfo>& ports, const std::string& server,
                        const std::string& localIp, const std::string& routeError, CheckList& out) {
  const std::string name = "route to " + server;
  if (localIp.empty()) {
    out.fail(name, routeError, "ip route get " + server);
    return;
  }
  for (const auto& p : ports) {
    for (const auto& g : p.gids) {
      if (g.ip != localIp) continue;
      const bool usable = g.type == "RoCE v2" || !p.roce();
      const std::string found = "leaves from " + localIp + " on " + g.netdev + ", held by " +
                                p.name() + " GID index " + std::to_string(g.index) + " (" +
                                (g.type.empty() ? p.linkLayer : g.type) + ")";
      if (usable) {
        out.pass(name, found);
        return;
      }
    }
  }
  out.fail(name,
           "leaves from " + localIp + ", which no RDMA port's RoCE v2 GID holds: proto=rdma to " +
               server + " cannot connect from this address",
           "ip route get " + server +
               "  # route it through the RDMA NIC, or for testing: "
               "rdma link add rxe0 type rxe netdev <that netdev>");
}

void clientHostChecks(const HostRoot& root, CheckList& out) {
  checkRpcRdma(root, out);
  checkMounts(root, out);
  checkSessionSlots(root, out);
  checkRdmaSlotTable(root, out);
}

}  // namespace nfsrdma::hostcheck
