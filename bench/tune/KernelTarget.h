// tune's target for the kernel NFS client: an export, not a mount point.
//   knfs:SERVER:/export[?proto=rdma&port=N&vers=4.2&nconnect=N&rsize=N&wsize=N
//                       &read_ahead_kb=N&OPTION...]
// The query is the start point: the mount options a trial starts from
// (proto=rdma by default, as the mount helper's) and the read-ahead of the
// mount's BDI; any other word is a mount option passed on as it is
// ("noatime", "actimeo=60"). tune mounts the export itself, once per trial,
// in a directory of its own, and unmounts it after: a user's own mounts
// are never touched.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/tune/TuneSearch.h"
#include "bench/tune/TuneSpace.h"
#include "client/mount/MountPlan.h"

namespace nfsrdma::bench {

struct KernelTarget {
  mount::MountRequest request;  // mountPoint empty: each trial's own
  std::optional<std::uint32_t> readAheadKb;
};

// Throws std::invalid_argument naming the part and what was expected.
KernelTarget parseKernelTarget(const std::string& spec);

// The kernel client's knobs for the start's options and the workload:
//   nconnect       1, 2, 4, 8, 16
//   rsize / wsize  64k, 256k, 1m (the one the workload uses; both for a mix)
//   read_ahead_kb  128, 1024, 4096, 15360 (buffered sequential reads only:
//                  O_DIRECT and random reads do not read ahead)
KnobSpace kernelKnobSpace(const KernelTarget& target, const ClientWorkload& w, bool direct,
                          bool sequential);

// The start's request with the setting's levels; read_ahead_kb apart.
struct KernelSetting {
  mount::MountRequest request;
  std::optional<std::uint32_t> readAheadKb;
};
KernelSetting kernelSetting(const KernelTarget& target, const std::vector<Knob>& knobs,
                            const Setting& setting);

// The mount options of a setting as one line ("vers=4.2,proto=rdma,...";
// ", read_ahead_kb=N" after them when set): a trial's name in the report.
std::string kernelSettingText(const KernelSetting& s, const mount::HostFacts& facts);

// The winning setting in the forms the host keeps: the mount command, the
// /etc/fstab line and Kubernetes' PersistentVolume + StorageClass with its
// mountOptions (the mount helper's renderer, for /mnt/nfs), and a
// read-ahead that persists across mounts: nfs-utils' nfsrahead reads
// [nfsrahead] in /etc/nfs.conf where it is installed (its udev rule runs it
// for every new NFS BDI), else a udev rule of our own does its job.
struct KernelHandOver {
  std::string mountCommand;
  std::string fstabLine;
  std::string kubernetesYaml;
  std::string readAheadNfsConf;   // empty: read-ahead not part of the setting
  std::string readAheadUdevRule;  // the same, for hosts without nfsrahead
};
KernelHandOver kernelHandOver(const KernelSetting& s, const mount::HostFacts& facts);

}  // namespace nfsrdma::bench
