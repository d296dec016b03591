// The kernel NFS client mount, planned from facts and then (optionally) run:
// `nfsrdma-client mount`. Pure planning (no I/O) so every rule is unit-tested:
// proto=rdma defaults to port 20049 and vers=4.2; the client module must be
// loaded; nconnect only where the kernel supports it for the transport; a
// second mount of a server already mounted needs nosharecache (the kernel
// otherwise shares one superblock, and with it one transport, between them),
// which is also how both transports are mounted side by side.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nfsrdma::mount {

struct MountRequest {
  std::string server;          // host or address
  std::string exportPath;      // "/data1/nfs"
  std::string mountPoint;      // "/mnt/nfs"
  std::string proto = "rdma";  // rdma | tcp | both (two mounts: <mountPoint>-rdma and -tcp)
  std::optional<std::uint16_t> port;
  std::string vers = "4.2";
  std::optional<std::uint32_t> rsize;
  std::optional<std::uint32_t> wsize;
  std::optional<std::uint32_t> nconnect;
  std::vector<std::string> extraOptions;
};

// What the host looks like (read by the CLI from /proc and uname, or given by tests).
struct HostFacts {
  std::string mounts;          // contents of /proc/mounts
  bool rdmaClientModule = false;  // rpcrdma (or xprtrdma) loaded
  int kernelMajor = 0;
  int kernelMinor = 0;
};

struct PlannedMount {
  std::string proto;
  std::string source;       // "server:/export"
  std::string mountPoint;
  std::string options;      // "vers=4.2,proto=rdma,port=20049,..."
  std::string command;      // "mount -t nfs -o ... server:/export /mnt"
  std::string fstabLine;
};

struct MountPlan {
  std::vector<PlannedMount> mounts;
  std::vector<std::string> notes;     // why an option was added or dropped
  std::vector<std::string> problems;  // blocking: the mount would fail
  std::string kubernetesYaml;         // PersistentVolume + StorageClass with the mountOptions
};

// Throws std::invalid_argument naming the bad field (proto, port, vers, sizes, paths).
MountPlan planMount(const MountRequest& request, const HostFacts& facts);

// "umount <mountPoint>" commands for what planMount would mount.
std::vector<std::string> planUnmount(const MountRequest& request);

// Lines of /proc/mounts whose source is server:/..., with their options.
struct ExistingMount {
  std::string source;
  std::string mountPoint;
  std::string options;
};
std::vector<ExistingMount> nfsMountsOf(std::string_view procMounts, std::string_view server);

}  // namespace nfsrdma::mount
