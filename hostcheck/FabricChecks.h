// FabricChecks: what both ends of NFS over RoCE need from the fabric, per
// RDMA port: a RoCE v2 GID with the address in use, a netdev MTU that fits
// the port's RDMA MTU, the rdma_cm's default TOS (the kernel NFS client and
// server never set one, so this is what puts their traffic in the lossless
// class), ECN and DSCP trust where the driver exposes them, PFC through
// `dcb`, and error or loss counters that have already counted.
#pragma once

#include <string>
#include <vector>

#include "hostcheck/CommandRunner.h"
#include "hostcheck/DoctorCheck.h"
#include "hostcheck/HostRoot.h"
#include "hostcheck/RdmaPorts.h"

namespace nfsrdma::hostcheck {

// Netdev MTU room RoCE needs above the RDMA MTU, as rdma_cm counts it when
// it picks a connection's path MTU from the netdev's (iboe_get_mtu,
// include/rdma/ib_addr.h: GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 +
// ICRC 4 bytes). The kernel NFS client and server connect through rdma_cm.
inline constexpr unsigned kRoceHeaderBytes = 96;

// The RDMA MTU rdma_cm uses on a netdev of this MTU (0: none fits). Sysfs
// has no port MTU to read (ibv_query_port has it), and a RoCE port's
// follows its netdev's anyway.
unsigned rocePathMtu(long long netdevMtu);

// The TOS the fix commands set: DSCP 26 (AF31, the usual RoCE class) with
// ECT(0), as NVIDIA's RoCE configuration guides do.
inline constexpr unsigned kRoceTos = 106;

struct FabricOptions {
  bool gids = true;  // the server's doctor reports GIDs itself
  // Runs `dcb`; null: nothing may run (a staged --root tree), PFC is not
  // checked and the line says so.
  CommandRunner* runner = nullptr;
};

// Each check for one port, in the order printed (fabricChecks runs them
// all for every port). Ports whose link layer is not Ethernet get the
// counter checks only.
void checkRoceGid(const RdmaPortInfo& port, CheckList& out);
void checkMtu(const HostRoot& root, const RdmaPortInfo& port, CheckList& out);
void checkRoceTos(const HostRoot& root, const RdmaPortInfo& port, CheckList& out);
void checkEcn(const HostRoot& root, const std::string& netdev, CheckList& out);
void checkTrust(const HostRoot& root, const std::string& netdev, CheckList& out);
void checkPfc(const HostRoot& root, const std::string& netdev, CommandRunner* runner,
              CheckList& out);
void checkNetdevCounters(const HostRoot& root, const std::string& netdev, CheckList& out);
void checkPortCounters(const HostRoot& root, const RdmaPortInfo& port, CheckList& out);

void fabricChecks(const HostRoot& root, const std::vector<RdmaPortInfo>& ports,
                  const FabricOptions& options, CheckList& out);

// The host path of a tool in the root's sbin and bin directories, or "".
std::string findTool(const HostRoot& root, const std::string& name);

}  // namespace nfsrdma::hostcheck
