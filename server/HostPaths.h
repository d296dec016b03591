// HostPaths: every host path the server component reads or writes, resolved
// under one root. `--root DIR` points it at a staging tree (tests, dry runs
// on a copy of a host); "/" is the live host. Nothing in server/ builds a host
// path any other way, so a test tree can never leak writes to the real /etc.
#pragma once

#include <filesystem>
#include <string>

namespace nfsrdma::server {

// How symlinks on the way from the root to a host path are treated. Every
// component is resolved inside the root: nothing the tool reads or writes
// can lie above it, whatever a link says.
enum class Links {
  // Our own files and directories (/etc/exports.d, /var/lib/nfsrdma and all
  // in it) and the kernel's /proc files: no component below the root may be
  // a symlink; one is refused with an error naming it, never followed.
  Refuse,
  // /etc/nfs.conf, the admin's file, may itself be a symlink (or a chain of
  // them, at most 40): an absolute target is read inside the root, a
  // relative one from the link's directory, and one that climbs above the
  // root is refused. The directories on the way to the link and to the file
  // it ends at must be real directories. Its temporary file is ours (Refuse).
  LastInRoot,
  // Read-only probes of sysfs, /lib/modules and dpkg (on a live host
  // /sys/class/* and /lib are symlinks): any component may be a link,
  // resolved with the root as "/" (openat2 RESOLVE_IN_ROOT), never above it.
  InRoot,
};

class HostPaths {
 public:
  // `root` must be absolute; "/" means the live host.
  explicit HostPaths(std::filesystem::path root = "/");

  const std::filesystem::path& root() const { return root_; }
  bool isLiveHost() const { return root_ == "/"; }

  // Maps an absolute host path ("/etc/nfs.conf") into the root.
  std::filesystem::path resolve(const std::filesystem::path& hostPath) const;

  // A host path as errors name it: "/etc/exports.d", plus
  // " (under --root DIR)" when the root is not "/".
  std::string display(const std::filesystem::path& hostPath) const;

  // The symlink rule for a host path (see Links): LastInRoot for
  // /etc/nfs.conf, Refuse under /etc/exports.d, /var/lib/nfsrdma and /proc,
  // InRoot for the rest (which the tool only reads).
  static Links linksFor(const std::filesystem::path& hostPath);

  // Whether a host path is `dir` or below it, compared after normalizing
  // ("/proc/../etc/passwd" is not under /proc).
  static bool isWithin(const std::filesystem::path& hostPath, const std::filesystem::path& dir);

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
