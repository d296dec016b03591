// Device discovery from sysfs and libibverbs. Missing sysfs files are normal
// (virtual devices lack device/numa_node; unpopulated GIDs have no type), so
// readers return "" and discovery goes on; only "no device at all" is an
// error.
#include "verbs/DeviceDiscovery.h"

#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <system_error>

#include "verbs/Context.h"
#include "verbs/DeviceList.h"
#include "verbs/VerbsError.h"

namespace nfsrdma::verbs {

namespace fs = std::filesystem;

std::string readSysfsLine(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line;
}

namespace {

int toInt(std::string_view s, int fallback) {
  int v = fallback;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() ? v : fallback;
}

// Directory entries sorted numerically when they are numbers.
std::vector<std::string> listDir(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    out.push_back(it->path().filename().string());
  }
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    const int x = toInt(a, -1), y = toInt(b, -1);
    if (x >= 0 && y >= 0) return x < y;
    return a < b;
  });
  return out;
}

// "4: ACTIVE" -> "ACTIVE"
std::string afterColon(const std::string& s) {
  const auto pos = s.find(": ");
  return pos == std::string::npos ? s : s.substr(pos + 2);
}

std::string portStateName(ibv_port_state s) {
  switch (s) {
    case IBV_PORT_DOWN:
      return "DOWN";
    case IBV_PORT_INIT:
      return "INIT";
    case IBV_PORT_ARMED:
      return "ARMED";
    case IBV_PORT_ACTIVE:
      return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER:
      return "ACTIVE_DEFER";
    default:
      return "NOP";
  }
}

PortInfo readPort(const fs::path& portDir, int number) {
  PortInfo p;
  p.number = number;
  p.state = afterColon(readSysfsLine(portDir / "state"));
  p.physState = afterColon(readSysfsLine(portDir / "phys_state"));
  p.linkLayer = readSysfsLine(portDir / "link_layer");
  const std::string rate = readSysfsLine(portDir / "rate");
  p.gbps = parseSysfsRate(rate);
  if (const auto open = rate.find('('), close = rate.find(')');
      open != std::string::npos && close != std::string::npos && close > open) {
    p.rate = rate.substr(open + 1, close - open - 1);
  } else {
    p.rate = rate;
  }
  for (const std::string& idx : listDir(portDir / "gids")) {
    const std::string gid = readSysfsLine(portDir / "gids" / idx);
    const std::optional<std::string> ip = gidToIp(gid);
    if (!ip) continue;  // unpopulated entry
    GidEntry g;
    g.index = toInt(idx, -1);
    g.gid = gid;
    g.ip = *ip;
    g.type = readSysfsLine(portDir / "gid_attrs" / "types" / idx);
    g.netdev = readSysfsLine(portDir / "gid_attrs" / "ndevs" / idx);
    if (p.netdev.empty()) p.netdev = g.netdev;
    p.gids.push_back(std::move(g));
  }
  return p;
}

}  // namespace

int netdevNumaNode(const std::string& netdev, const fs::path& sysfsRoot) {
  const int n =
      toInt(readSysfsLine(sysfsRoot / "class" / "net" / netdev / "device" / "numa_node"), -1);
  return n >= 0 ? n : -1;
}

namespace {

DeviceInfo readDevice(const fs::path& sysfsRoot, const std::string& name) {
  const fs::path dev = sysfsRoot / "class" / "infiniband" / name;
  DeviceInfo d;
  d.name = name;
  d.nodeGuid = readSysfsLine(dev / "node_guid");
  d.nodeType = afterColon(readSysfsLine(dev / "node_type"));
  d.firmware = readSysfsLine(dev / "fw_ver");
  d.numaNode = toInt(readSysfsLine(dev / "device" / "numa_node"), -1);
  std::error_code ec;
  d.software = !fs::exists(dev / "device", ec) && !ec;
  for (const std::string& port : listDir(dev / "ports")) {
    const int n = toInt(port, -1);
    if (n > 0) d.ports.push_back(readPort(dev / "ports" / port, n));
  }
  if (d.numaNode < 0) {
    // Virtual devices (rxe, siw) sit on a netdev that may know its node.
    for (const PortInfo& p : d.ports) {
      if (p.netdev.empty()) continue;
      const int n = netdevNumaNode(p.netdev, sysfsRoot);
      if (n >= 0) d.numaNode = n;
      break;
    }
  }
  return d;
}

void enrichFromVerbs(DeviceInfo& d, ibv_device* device) {
  try {
    const Context ctx = Context::open(device);
    const ibv_device_attr attr = ctx.queryDevice();
    if (isSoftwareVendor(attr.vendor_id)) d.software = true;
    for (std::uint8_t n = 1; n <= attr.phys_port_cnt; ++n) {
      auto it = std::find_if(d.ports.begin(), d.ports.end(),
                             [n](const PortInfo& p) { return p.number == n; });
      if (it == d.ports.end()) {
        d.ports.push_back(PortInfo{});
        it = std::prev(d.ports.end());
        it->number = n;
      }
      const ibv_port_attr pa = ctx.queryPort(n);
      it->state = portStateName(pa.state);
      it->activeMtu = mtuBytes(pa.active_mtu);
      if (const double g = linkSpeedGbps(pa.active_speed, pa.active_width); g > 0) {
        it->gbps = g;
        it->rate = linkRateName(pa.active_speed, pa.active_width);
      }
      if (it->linkLayer.empty()) {
        it->linkLayer = pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand";
      }
    }
  } catch (const std::exception& e) {
    d.notes.emplace_back(e.what());
  }
}

}  // namespace

bool isSoftwareVendor(std::uint32_t vendorId) {
  constexpr std::uint32_t kRxeVendorId = 0xffffff;
  constexpr std::uint32_t kSiwVendorId = 0x626d74;
  return vendorId == kRxeVendorId || vendorId == kSiwVendorId;
}

double parseSysfsRate(std::string_view rate) {
  // Leading number: "100 Gb/sec (4X EDR)" or "2.5 Gb/sec (1X SDR)".
  std::size_t end = 0;
  while (end < rate.size() && ((rate[end] >= '0' && rate[end] <= '9') || rate[end] == '.')) ++end;
  if (end == 0) return 0;
  double v = 0;
  const auto r = std::from_chars(rate.data(), rate.data() + end, v);
  return r.ec == std::errc() ? v : 0;
}

namespace {
struct SpeedRow {
  std::uint8_t bit;
  double laneGbps;
  const char* name;
};
// Per-lane data rates as the kernel's sysfs "rate" reports them.
constexpr std::array<SpeedRow, 8> kSpeeds{{{1, 2.5, "SDR"},
                                           {2, 5.0, "DDR"},
                                           {4, 10.0, "QDR"},
                                           {8, 10.0, "FDR10"},
                                           {16, 14.0, "FDR"},
                                           {32, 25.0, "EDR"},
                                           {64, 50.0, "HDR"},
                                           {128, 100.0, "NDR"}}};
struct WidthRow {
  std::uint8_t bit;
  int lanes;
};
constexpr std::array<WidthRow, 5> kWidths{{{1, 1}, {2, 4}, {4, 8}, {8, 12}, {16, 2}}};

const SpeedRow* speedRow(std::uint8_t s) {
  for (const auto& r : kSpeeds)
    if (r.bit == s) return &r;
  return nullptr;
}
int lanes(std::uint8_t w) {
  for (const auto& r : kWidths)
    if (r.bit == w) return r.lanes;
  return 0;
}
}  // namespace

double linkSpeedGbps(std::uint8_t activeSpeed, std::uint8_t activeWidth) {
  const SpeedRow* s = speedRow(activeSpeed);
  return s == nullptr ? 0 : s->laneGbps * lanes(activeWidth);
}

std::string linkRateName(std::uint8_t activeSpeed, std::uint8_t activeWidth) {
  const SpeedRow* s = speedRow(activeSpeed);
  const int n = lanes(activeWidth);
  if (s == nullptr || n == 0) return {};
  return std::to_string(n) + "X " + s->name;
}

int mtuBytes(int ibvMtu) {
  return ibvMtu >= 1 && ibvMtu <= 5 ? 128 << ibvMtu : 0;
}

std::optional<std::string> gidToIp(std::string_view text) {
  // sysfs: "0000:0000:0000:0000:0000:ffff:c612:0001"; inet_pton reads it.
  const std::string s(text);
  std::array<unsigned char, 16> raw{};
  if (inet_pton(AF_INET6, s.c_str(), raw.data()) != 1) return std::nullopt;
  if (std::all_of(raw.begin(), raw.end(), [](unsigned char b) { return b == 0; }))
    return std::nullopt;
  char out[INET6_ADDRSTRLEN] = {};
  const bool mapped =
      std::all_of(raw.begin(), raw.begin() + 10, [](unsigned char b) { return b == 0; }) &&
      raw[10] == 0xff && raw[11] == 0xff;
  if (mapped) {
    inet_ntop(AF_INET, raw.data() + 12, out, sizeof out);
  } else {
    inet_ntop(AF_INET6, raw.data(), out, sizeof out);
  }
  return std::string(out);
}

std::vector<DeviceInfo> discoverDevices(const DiscoveryOptions& options) {
  std::vector<DeviceInfo> out;
  if (!options.queryVerbs) {
    for (const std::string& name : listDir(options.sysfsRoot / "class" / "infiniband")) {
      out.push_back(readDevice(options.sysfsRoot, name));
    }
    if (out.empty()) {
      throw NoDeviceError("sysfs: " + (options.sysfsRoot / "class" / "infiniband").string() +
                          " lists none");
    }
    return out;
  }
  const DeviceList list = DeviceList::open();
  for (std::size_t i = 0; i < list.size(); ++i) {
    DeviceInfo d = readDevice(options.sysfsRoot, list.name(i));
    enrichFromVerbs(d, list[i]);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace nfsrdma::verbs
