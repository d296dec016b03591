// Device discovery: what `ibv_devinfo` shows plus what operators actually need
// to check a RoCE setup, i.e. which GID carries which IP address, of which
// type (RoCE v1/v2), on which netdev, at what link speed, on which NUMA node.
// Most of it comes from sysfs (/sys/class/infiniband, gid_attrs/{types,ndevs}),
// the rest (active MTU, speed and width) from libibverbs. The sysfs root is a
// parameter so unit tests can point discovery at a fake tree and skip verbs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nfsrdma::verbs {

struct GidEntry {
  int index = 0;
  std::string gid;     // as sysfs prints it: 8 groups of 4 hex digits
  std::string type;    // "RoCE v2", "IB/RoCE v1", or "" when unknown
  std::string ip;      // IPv4 for ::ffff:a.b.c.d GIDs, else the IPv6 text
  std::string netdev;  // gid_attrs/ndevs, "" on InfiniBand
};

struct PortInfo {
  int number = 0;
  std::string state;           // "ACTIVE", "DOWN", ...
  std::string physState;       // "LinkUp", ...
  std::string linkLayer;       // "Ethernet" or "InfiniBand"
  double gbps = 0;             // active speed x width; 0 when unknown
  std::string rate;            // "4X EDR", or sysfs rate text
  int activeMtu = 0;           // bytes; 0 when unknown
  std::string netdev;          // netdev behind the port (first GID's), "" if none
  std::vector<GidEntry> gids;  // populated (non-zero) entries only
};

struct DeviceInfo {
  std::string name;
  std::string nodeGuid;
  std::string nodeType;
  std::string firmware;
  int numaNode = -1;  // -1: not reported (virtual devices such as rxe)
  // rxe or siw: its packet work runs on the host's CPUs, so a thread
  // spinning on one of its CQs competes with the device. Known by its vendor
  // id (verbs) or, from sysfs alone, by having no bus device behind it
  // (kernels since 5.11; before, rxe borrowed its netdev's parent).
  bool software = false;
  std::vector<PortInfo> ports;
  std::vector<std::string> notes;  // per-device problems that did not stop discovery
};

struct DiscoveryOptions {
  std::filesystem::path sysfsRoot = "/sys";
  // When true, the device list comes from libibverbs (NoDeviceError when
  // empty) and ports are enriched with ibv_query_port. When false, sysfs
  // alone (unit tests with a fake tree).
  bool queryVerbs = true;
};

// Throws NoDeviceError when there is no device.
std::vector<DeviceInfo> discoverDevices(const DiscoveryOptions& options = {});

// First line of a sysfs file without its newline or trailing spaces; "" when
// absent or unreadable.
std::string readSysfsLine(const std::filesystem::path& p);
// The NUMA node of a network interface (sysfs class/net/NAME/device/numa_node),
// or -1 when it reports none (virtual interfaces, loopback).
int netdevNumaNode(const std::string& netdev, const std::filesystem::path& sysfsRoot = "/sys");

// Gb/s of an active speed (IBV_SPEED-style bit: 1 SDR .. 128 NDR) times
// width (1 = 1X, 2 = 4X, 4 = 8X, 8 = 12X, 16 = 2X). 0 when either unknown.
double linkSpeedGbps(std::uint8_t activeSpeed, std::uint8_t activeWidth);
// "4X EDR"; "" when unknown.
std::string linkRateName(std::uint8_t activeSpeed, std::uint8_t activeWidth);
// IBV_MTU_256..IBV_MTU_4096 (1..5) to bytes; 0 otherwise.
int mtuBytes(int ibvMtu);
// The IP a GID carries: "198.18.0.1" for ::ffff:c612:1; IPv6 text otherwise;
// nullopt for a malformed or all-zero GID.
std::optional<std::string> gidToIp(std::string_view sysfsGid);
// Parses sysfs "rate" ("100 Gb/sec (4X EDR)"): Gb/s, or 0.
double parseSysfsRate(std::string_view rate);
// The vendor ids the kernel's software devices report: rxe 0xffffff, siw
// 0x626d74 ("bmt").
bool isSoftwareVendor(std::uint32_t vendorId);

}  // namespace nfsrdma::verbs
