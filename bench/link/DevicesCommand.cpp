// `nfsrdma-bench devices`: RDMA devices as ibv_devinfo shows them plus what a
// RoCE setup is checked by: each GID's type, IP address and netdev, the link
// speed in Gb/s and the NUMA node. Text and JSON come from the same
// DeviceInfo list. No device is an error with one clear line (exit 1).
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <string>

#include "bench/BenchCommands.h"
#include "bench/report/Json.h"
#include "bench/report/ReportTable.h"
#include "util/ToolCli.h"
#include "verbs/DeviceDiscovery.h"
#include "verbs/VerbsError.h"

namespace nfsrdma::bench {

namespace {

std::string gbpsText(double g) {
  if (g <= 0) return "?";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", g);
  return buf;
}

void printTable(const std::vector<verbs::DeviceInfo>& devices) {
  std::printf("%-10s %-4s %-8s %-10s %-10s %-7s %-5s %-10s %-4s %s\n", "device", "port", "state",
              "link", "rate", "Gb/s", "MTU", "netdev", "NUMA", "node GUID");
  for (const auto& d : devices) {
    const std::string numa = d.numaNode >= 0 ? std::to_string(d.numaNode) : "-";
    if (d.ports.empty()) {
      std::printf("%-10s (no ports)\n", d.name.c_str());
    }
    for (const auto& p : d.ports) {
      std::printf("%-10s %-4d %-8s %-10s %-10s %-7s %-5s %-10s %-4s %s\n", d.name.c_str(), p.number,
                  p.state.c_str(), p.linkLayer.c_str(), p.rate.empty() ? "?" : p.rate.c_str(),
                  gbpsText(p.gbps).c_str(),
                  p.activeMtu > 0 ? std::to_string(p.activeMtu).c_str() : "?",
                  p.netdev.empty() ? "-" : p.netdev.c_str(), numa.c_str(), d.nodeGuid.c_str());
      for (const auto& g : p.gids) {
        std::printf("    GID %-3d %-40s %-11s %-26s %s\n", g.index, g.gid.c_str(),
                    g.type.empty() ? "-" : g.type.c_str(), g.ip.c_str(),
                    g.netdev.empty() ? "-" : g.netdev.c_str());
      }
    }
    for (const auto& n : d.notes) std::printf("    note: %s\n", n.c_str());
  }
}

// Integers as JSON numbers (the writer's are unsigned or double; these fit a double exactly).
double num(int v) {
  return static_cast<double>(v);
}

void writePort(JsonWriter& w, const verbs::PortInfo& p) {
  w.beginObject()
      .field("port", num(p.number))
      .field("state", p.state)
      .field("phys_state", p.physState);
  w.field("link_layer", p.linkLayer).field("rate", p.rate).field("gbps", p.gbps);
  w.field("active_mtu", num(p.activeMtu)).field("netdev", p.netdev).beginArray("gids");
  for (const auto& g : p.gids) {
    w.beginObject().field("index", num(g.index)).field("gid", g.gid).field("type", g.type);
    w.field("ip", g.ip).field("netdev", g.netdev).endObject();
  }
  w.endArray().endObject();
}

// An object (was a bare array before the version): the devices under "devices".
std::string toJson(const std::vector<verbs::DeviceInfo>& devices) {
  JsonWriter w;
  w.beginObject().field("schema", "nfsrdma-bench-devices/1");
  writeVersionField(w).beginArray("devices");
  for (const auto& d : devices) {
    w.beginObject()
        .field("name", d.name)
        .field("node_guid", d.nodeGuid)
        .field("node_type", d.nodeType);
    w.field("firmware", d.firmware)
        .field("numa_node", num(d.numaNode))
        .field("software", d.software);
    w.beginArray("ports");
    for (const auto& p : d.ports) writePort(w, p);
    w.endArray().beginArray("notes");
    for (const auto& n : d.notes) w.field({}, n);
    w.endArray().endObject();
  }
  w.endArray().endObject();
  return w.str();
}

// The command line of `devices`, parsed.
struct DevicesArgs {
  bool help = false;
  bool json = false;
  std::string sysfs;  // empty: every device libibverbs sees
};

namespace po = boost::program_options;

po::options_description devicesOptions(DevicesArgs& a) {
  po::options_description desc("usage: nfsrdma-bench devices [options]\n\noptions");
  desc.add_options()("help,h", po::bool_switch(&a.help), "show this help")(
      "json", po::bool_switch(&a.json), "print JSON")(
      "sysfs", po::value(&a.sysfs), "read this sysfs root only (no libibverbs), e.g. a saved tree");
  return desc;
}

// Boost's errors are usage errors.
void parseDevicesArgs(int argc, char** argv, const po::options_description& desc) {
  try {
    tool::parseOrUsageError([&] {
      po::variables_map vm;
      po::store(po::parse_command_line(argc, argv, desc), vm);
      po::notify(vm);
    });
  } catch (const tool::UsageError& e) {
    throw tool::UsageError(std::string(e.what()) + " (see --help)");
  }
}

void printDevices(const DevicesArgs& a) {
  verbs::DiscoveryOptions d;
  if (!a.sysfs.empty()) {
    d.sysfsRoot = a.sysfs;
    d.queryVerbs = false;
  }
  const auto devices = verbs::discoverDevices(d);
  if (a.json) {
    std::printf("%s\n", toJson(devices).c_str());
  } else {
    printTable(devices);
  }
}

}  // namespace

int runDevicesCommand(int argc, char** argv) {
  return tool::runReportingErrors("nfsrdma-bench devices", std::cerr, [&] {
    DevicesArgs a;
    const po::options_description desc = devicesOptions(a);
    parseDevicesArgs(argc, argv, desc);
    if (a.help) {
      std::cout << desc << "\n";
      return tool::kExitSuccess;
    }
    printDevices(a);
    return tool::kExitSuccess;
  });
}

}  // namespace nfsrdma::bench
