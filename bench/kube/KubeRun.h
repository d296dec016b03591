// What `nfsrdma-bench kube` renders, decided once from its options: an
// N-rank run of `compare` on Kubernetes (ranks, image, targets, volumes,
// workload, RDMA, start time). Every option is checked here, before anything
// is written: a wrong option is one line at render time, not N pods failing
// at the start time. Pure: no I/O, and no clock (the render time is an
// input, so a test gets the same manifest every time).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nfsrdma::bench::kube {

// The resource the k8s-rdma-shared-dev-plugin advertises by default: every
// pod on a node shares the node's RDMA device through it.
inline constexpr std::string_view kDefaultRdmaResource = "rdma/rdma_shared_device_a";
// What a cell needs besides its ramp and runtime (connect, lay out or warm
// the file set, the stragglers' wait) when --cell-slot is not given.
inline constexpr std::int64_t kCellSetupAllowanceS = 60;

enum class VolumeKind {
  SharedRwx,  // one ReadWriteMany PVC that every pod mounts (an NFS class, CephFS)
  Ephemeral,  // a generic ephemeral volume per pod (node-local classes: local-path, RWO)
};
const char* volumeKindWord(VolumeKind k);  // "rwx" / "ephemeral", as --volume spells it

struct KubeVolume {
  std::string name;  // the pod's volume, the PVC's suffix and the target's name
  VolumeKind kind = VolumeKind::SharedRwx;
  std::string storageClass;
  std::uint64_t capacityBytes = 0;  // 0 until planned: then given or computed

  std::string mountPath() const { return "/mnt/" + name; }
};

// A compare target as the pod's `--target` gives it: NAME=ENGINE:LOCATION.
struct KubeTarget {
  std::string name;
  std::string engine;    // nfs, libnfs or path
  std::string location;  // an nfs:// URL ({rank} is the client's to fill in) or a directory

  std::string text() const { return name + "=" + engine + ":" + location; }
};

// The workload each rank runs, as compare's options spell it.
struct KubeWorkload {
  std::vector<std::string> profiles;
  double runtime = 30;
  double ramp = 5;
  std::string size = "1g";
  std::uint32_t iodepth = 0;  // 0: each profile's own
  std::uint32_t numjobs = 1;
  bool verify = false;
};

// The command line as given. Numbers are signed so that "-1" is refused by
// name instead of read as 2^32-1.
struct KubeArgs {
  std::string name = "nfsrdma-run";
  std::string ns;  // empty: the namespace kubectl applies to
  std::string image;
  std::int64_t clients = 0;
  std::vector<std::string> targets;
  std::vector<std::string> volumes;
  std::string profiles;  // comma list; empty: compare's seven
  double runtime = 30;
  double ramp = 5;
  std::string size = "1g";
  std::int64_t iodepth = 0;
  std::int64_t numjobs = 1;
  bool verify = false;
  std::string rdmaResource;  // empty: no RDMA
  bool hostNetwork = false;
  std::int64_t startIn = 120;
  std::int64_t cellSlot = 0;  // 0: ramp + runtime + kCellSetupAllowanceS
  bool startInGiven = false;  // --start-in or --cell-slot given (refused with --mpi-operator)
  bool mpiOperator = false;
};

struct KubeRun {
  std::string name;
  std::string ns;
  std::string image;
  std::uint32_t clients = 0;
  std::vector<KubeTarget> targets;  // --target's, then one per --volume, in the order given
  std::vector<KubeVolume> volumes;
  KubeWorkload workload;
  std::string rdmaResource;
  bool hostNetwork = false;
  bool mpiOperator = false;
  std::int64_t renderedAt = 0;  // Unix seconds
  std::int64_t startAt = 0;     // Unix seconds of the first cell (the Indexed Job's)
  std::int64_t cellSlot = 0;    // seconds from one cell's start to the next's

  // The Job's (or MPIJob's) name and what it prefixes.
  std::string settingsName() const { return name + "-settings"; }
  std::string claimName(const KubeVolume& v) const { return name + "-" + v.name; }
};

// "nfs=rwx:nfs-client" or "local=ephemeral:local-path:200Gi" (the size is
// optional: by default the file set the ranks lay out there, with room to
// spare). Throws tool::UsageError naming --volume and the expected form.
KubeVolume parseVolume(std::string_view text);
// "nfs-tcp=nfs:nfs://srv/export" (also libnfs:URL and path:DIR). Throws
// tool::UsageError naming --target and the expected form.
KubeTarget parseTarget(std::string_view text);
// The capacity a volume gets when --volume gives none: the bytes laid out
// on it (every rank's for a shared volume, one rank's for a per-pod
// one) plus 10% and 1 GiB, in whole GiB.
std::uint64_t defaultCapacityBytes(VolumeKind kind, std::uint32_t clients,
                                   std::uint64_t bytesPerClient);

// Checks the arguments together and decides what they leave open (the
// start time from nowUnixSeconds, the cell slot, the volumes' sizes).
// Throws tool::UsageError naming the option and what was expected.
KubeRun planKubeRun(const KubeArgs& a, std::int64_t nowUnixSeconds);

}  // namespace nfsrdma::bench::kube
