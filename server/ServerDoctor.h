// ServerDoctor: `nfsrdma-server doctor`, the checklist an engineer runs by
// hand before NFS over RDMA works (packages, modules, RDMA port state, RoCE
// GIDs, nfsd, listener, `insecure`, then the fabric and the host), each
// with the command that fixes it.
// A host without RDMA or nfsd is an expected answer, never a crash.
#pragma once

#include <string>
#include <vector>

#include "hostcheck/CommandRunner.h"
#include "hostcheck/DoctorCheck.h"
#include "server/HostPaths.h"
#include "server/HostState.h"
#include "server/ServerConfig.h"

namespace nfsrdma::server {

// The check type and its text are hostcheck's, shared with the client's doctor.
using hostcheck::anyFailed;
using hostcheck::CheckLevel;
using hostcheck::DoctorCheck;
using hostcheck::renderDoctor;

// `config` may be null (no config given): then the checks use defaults
// (RDMA port 20049, any device) and skip the per-export ones. After the
// server's own checks come hostcheck's fabric checks for the RDMA ports in
// use and the server host's (NUMA, IRQs, governor, nfsd threads, credits).
// `runner` runs `dcb` for the PFC check; null (a staged --root tree):
// PFC is not checked and its line says so.
std::vector<DoctorCheck> runDoctor(const HostPaths& paths, const HostState& state,
                                   const ServerConfig* config,
                                   hostcheck::CommandRunner* runner = nullptr);

}  // namespace nfsrdma::server
