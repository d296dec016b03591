// ServerDoctor: `nfsrdma-server doctor`, the checklist an engineer runs by
// hand before NFS over RDMA works (packages, modules, RDMA port state, RoCE
// GIDs, nfsd, listener, `insecure`), each with the command that fixes it.
// A host without RDMA or nfsd is an expected answer, never a crash.
#pragma once

#include <string>
#include <vector>

#include "server/HostPaths.h"
#include "server/HostState.h"
#include "server/ServerConfig.h"

namespace nfsrdma::server {

enum class CheckLevel { Pass, Warn, Fail };

struct DoctorCheck {
  CheckLevel level = CheckLevel::Pass;
  std::string name;    // "module nfsd"
  std::string detail;  // what was found
  std::string fix;     // the command (or edit) that fixes it; empty for PASS
};

// `config` may be null (no config given): then the checks use defaults
// (RDMA port 20049, any device) and skip the per-export ones.
std::vector<DoctorCheck> runDoctor(const HostPaths& paths, const HostState& state,
                                   const ServerConfig* config);

// One line per check: "FAIL  module nfsd: not loaded  -> fix: modprobe nfsd".
std::string renderDoctor(const std::vector<DoctorCheck>& checks);
bool anyFailed(const std::vector<DoctorCheck>& checks);

}  // namespace nfsrdma::server
