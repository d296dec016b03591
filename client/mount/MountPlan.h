// The kernel NFS client mount, planned from facts and then (optionally) run:
// `nfsrdma-client mount`. Pure planning (no I/O) so every rule is unit-tested:
// proto=rdma defaults to port 20049 and vers=4.2; nconnect only where the
// kernel uses it for the transport; a second mount of a server already mounted
// gets nosharecache (its own superblock: own cache and mount options); over
// NFSv4 a second transport at the same minor version is refused, because the
// kernel would put it on the first mount's client. Every input ends up in a
// mount(8) command line, an fstab line and YAML, so each is checked or escaped
// for all three.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nfsrdma::mount {

struct MountRequest {
  std::string server;          // host name, IPv4 address or [IPv6 address]
  std::string exportPath;      // "/data1/nfs"
  std::string mountPoint;      // "/mnt/nfs"
  std::string proto = "rdma";  // rdma | tcp | both (two mounts: <mountPoint>-rdma and -tcp)
  std::optional<std::uint16_t> port;
  std::string vers = "4.2";
  std::optional<std::uint32_t> rsize;
  std::optional<std::uint32_t> wsize;
  std::optional<std::uint32_t> nconnect;
  std::vector<std::string> extraOptions;  // one mount option each ("-o noatime")
};

// What the host looks like (read by the CLI from /proc and uname, or given by tests).
struct HostFacts {
  std::string mounts;             // contents of /proc/mounts
  bool rdmaClientModule = false;  // rpcrdma (or xprtrdma) loaded
  int kernelMajor = 0;
  int kernelMinor = 0;
};

struct PlannedMount {
  std::string proto;
  std::string source;  // "server:/export"
  std::string mountPoint;
  std::string options;            // "vers=4.2,proto=rdma,port=20049,..."
  std::vector<std::string> argv;  // {"mount", "-t", "nfs", "-o", options, source, mountPoint}
  std::string command;            // argv for a POSIX shell, quoted where needed
  std::string fstabLine;
};

struct MountPlan {
  std::vector<PlannedMount> mounts;
  std::vector<std::string> notes;     // why an option was added or dropped
  std::vector<std::string> problems;  // blocking: the mount would fail
  std::string kubernetesYaml;         // PersistentVolume + StorageClass with the mountOptions
};

// Throws std::invalid_argument naming the bad field (server, paths, proto, port, vers, sizes,
// -o options).
MountPlan planMount(const MountRequest& request, const HostFacts& facts);

struct PlannedUnmount {
  std::string source;  // what should be mounted there: "server:/export"
  std::string mountPoint;
  std::vector<std::string> argv;  // {"umount", mountPoint}
  std::string command;            // argv for a POSIX shell, quoted where needed
};

// The unmounts undoing what planMount would mount; throws like planMount.
std::vector<PlannedUnmount> planUnmount(const MountRequest& request);

// Why u must not be run, or nothing when /proc/mounts has u.source (nfs or nfs4) on
// u.mountPoint.
std::optional<std::string> unmountProblem(const PlannedUnmount& u, std::string_view procMounts);

// Why a new mount of r (one transport) would not get an NFS client of its
// own, or nothing: an NFSv4 mount of the same server over the same
// transport at the same minor version ("4" may meet any) is there, and
// the kernel gives a new mount that mount's client, so its connections
// (nconnect), credits and slots are that mount's whatever the new one
// asks. A tool that measures mount options (nfsrdma-bench tune) must not
// measure through it.
std::optional<std::string> sharedClientMount(const MountRequest& r, std::string_view procMounts);

// A line of /proc/mounts, its fields unescaped (\040 is a space).
struct ExistingMount {
  std::string source;
  std::string mountPoint;
  std::string options;
  std::string type;  // "nfs", "nfs4", "ext4", ...
};
std::vector<ExistingMount> parseProcMounts(std::string_view procMounts);
// Those whose source is server:/... (server with or without IPv6 brackets), NFS only.
std::vector<ExistingMount> nfsMountsOf(std::string_view procMounts, std::string_view server);
// The value of key= in a comma-separated mount option list ("" when absent).
std::string optionValue(std::string_view options, std::string_view key);

// The word as a POSIX shell reads it back: itself when that is safe, else single-quoted.
std::string shellQuote(std::string_view word);

}  // namespace nfsrdma::mount
