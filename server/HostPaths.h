// HostPaths: every host path the server component reads or writes, resolved
// under one root. `--root DIR` points it at a staging tree (tests, dry runs
// on a copy of a host); "/" is the live host. Nothing in server/ builds a host
// path any other way, so a test tree can never leak writes to the real /etc.
#pragma once

#include <filesystem>
#include <string>

namespace nfsrdma::server {

class HostPaths {
 public:
  // `root` must be absolute; "/" means the live host.
  explicit HostPaths(std::filesystem::path root = "/");

  const std::filesystem::path& root() const { return root_; }
  bool isLiveHost() const { return root_ == "/"; }

  // Maps an absolute host path ("/etc/nfs.conf") into the root.
  std::filesystem::path resolve(const std::filesystem::path& hostPath) const;

  // The files and directories we touch, as host paths (before resolve()).
  static constexpr const char* kOwnExports = "/etc/exports.d/nfsrdma.exports";
  static constexpr const char* kNfsConf = "/etc/nfs.conf";
  static constexpr const char* kNfsdDir = "/proc/fs/nfsd";
  static constexpr const char* kPortList = "/proc/fs/nfsd/portlist";
  static constexpr const char* kThreads = "/proc/fs/nfsd/threads";
  static constexpr const char* kVersions = "/proc/fs/nfsd/versions";
  static constexpr const char* kLeaseTime = "/proc/fs/nfsd/nfsv4leasetime";
  static constexpr const char* kGraceTime = "/proc/fs/nfsd/nfsv4gracetime";
  static constexpr const char* kKernelExports = "/proc/fs/nfs/exports";
  static constexpr const char* kSvcRdmaSysctl = "/proc/sys/sunrpc/svc_rdma";
  static constexpr const char* kOsRelease = "/proc/sys/kernel/osrelease";
  static constexpr const char* kProcModules = "/proc/modules";
  static constexpr const char* kSysModule = "/sys/module";
  static constexpr const char* kInfiniband = "/sys/class/infiniband";
  static constexpr const char* kNet = "/sys/class/net";
  static constexpr const char* kLibModules = "/lib/modules";
  static constexpr const char* kDpkgStatus = "/var/lib/dpkg/status";
  static constexpr const char* kStateDir = "/var/lib/nfsrdma";
  static constexpr const char* kBackupDir = "/var/lib/nfsrdma/backups";
  static constexpr const char* kLastApply = "/var/lib/nfsrdma/last-apply.yaml";

 private:
  std::filesystem::path root_;
};

}  // namespace nfsrdma::server
