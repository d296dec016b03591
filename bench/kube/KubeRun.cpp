#include "bench/kube/KubeRun.h"

#include <cctype>
#include <cmath>

#include "bench/job/FileProfile.h"
#include "bench/job/WorkloadOptions.h"
#include "util/ToolCli.h"

namespace nfsrdma::bench::kube {
namespace {

using tool::UsageError;

constexpr std::uint64_t kGiB = 1ULL << 30;
// Above this a rank count is more likely a typo than a cluster; Indexed
// Jobs themselves take up to 100000 completions.
constexpr std::int64_t kMaxClients = 1000;
// The run's name prefixes every object ("NAME-settings", "NAME-VOLUME") and
// the MPIJob's hosts ("NAME-worker-999"), which are DNS labels of at most 63
// characters: 40 leaves room for the longest suffix.
constexpr std::size_t kMaxRunName = 40;
constexpr std::size_t kMaxVolumeName = 20;

bool isLowerAlnum(char c) {
  return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c));
}

// A DNS-1035 label (RFC 1035 as Kubernetes checks it): lowercase letters,
// digits and '-', a letter first and no '-' last.
bool isDnsLabel(std::string_view s, std::size_t maxLen) {
  if (s.empty() || s.size() > maxLen) return false;
  if (!std::islower(static_cast<unsigned char>(s.front())) || s.back() == '-') return false;
  for (char c : s) {
    if (!isLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

// A DNS-1123 subdomain, the form of a StorageClass name: labels joined by '.'.
bool isDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253 || !isLowerAlnum(s.front()) || !isLowerAlnum(s.back())) {
    return false;
  }
  for (char c : s) {
    if (!isLowerAlnum(c) && c != '-' && c != '.') return false;
  }
  return true;
}

// A device plugin's extended resource: DOMAIN/NAME.
bool isResourceName(std::string_view s) {
  const auto slash = s.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == s.size()) return false;
  if (!isDnsSubdomain(s.substr(0, slash))) return false;
  for (char c : s.substr(slash + 1)) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return false;
    }
  }
  return true;
}

std::string volumeForm() {
  return "expected NAME=rwx:STORAGECLASS[:SIZE] or NAME=ephemeral:STORAGECLASS[:SIZE]";
}

// "200Gi" as Kubernetes writes it, or "200g" as --size does (both binary).
std::uint64_t parseCapacity(const std::string& text, const std::string& where) {
  const bool k8sUnit = text.size() >= 2 && text.back() == 'i' &&
                       std::string_view("KMGT").find(text[text.size() - 2]) != std::string::npos;
  std::uint64_t bytes = 0;
  try {
    bytes = parseSize(k8sUnit ? text + "B" : text, "size");
  } catch (const std::invalid_argument&) {
    bytes = 0;
  }
  if (bytes < (1ULL << 20)) {
    throw UsageError(where + ": size '" + text +
                     "': expected at least 1 MiB as a number with an optional binary unit "
                     "(k, m, g, t or Ki, Mi, Gi, Ti), e.g. 200Gi");
  }
  return bytes;
}

VolumeKind volumeKindOf(const std::string& word, const std::string& where) {
  if (word == "rwx") return VolumeKind::SharedRwx;
  if (word == "ephemeral") return VolumeKind::Ephemeral;
  throw UsageError(where + ": kind '" + word +
                   "': expected rwx (one ReadWriteMany claim every pod mounts) or ephemeral (a "
                   "volume of its own per pod, for node-local classes such as local-path)");
}

}  // namespace

const char* volumeKindWord(VolumeKind k) {
  return k == VolumeKind::SharedRwx ? "rwx" : "ephemeral";
}

KubeVolume parseVolume(std::string_view text) {
  const std::string where = "--volume " + std::string(text);
  const auto eq = text.find('=');
  const auto colon = text.find(':', eq == std::string_view::npos ? 0 : eq);
  if (eq == std::string_view::npos || colon == std::string_view::npos || colon + 1 == text.size()) {
    throw UsageError(where + ": " + volumeForm());
  }
  KubeVolume v;
  v.name = std::string(text.substr(0, eq));
  if (!isDnsLabel(v.name, kMaxVolumeName)) {
    throw UsageError(where + ": name '" + v.name + "': expected at most " +
                     std::to_string(kMaxVolumeName) +
                     " lowercase letters, digits and '-', starting with a letter (it names the "
                     "volume, its claim and its target)");
  }
  v.kind = volumeKindOf(std::string(text.substr(eq + 1, colon - eq - 1)), where);
  const std::string rest(text.substr(colon + 1));
  const auto sizeColon = rest.find(':');
  v.storageClass = rest.substr(0, sizeColon);
  if (!isDnsSubdomain(v.storageClass)) {
    throw UsageError(where + ": storage class '" + v.storageClass +
                     "': expected a StorageClass name (lowercase letters, digits, '-' and '.'); " +
                     volumeForm());
  }
  if (sizeColon != std::string::npos)
    v.capacityBytes = parseCapacity(rest.substr(sizeColon + 1), where);
  return v;
}

KubeTarget parseTarget(std::string_view text) {
  const std::string where = "--target " + std::string(text);
  const auto eq = text.find('=');
  const auto colon = text.find(':', eq == std::string_view::npos ? 0 : eq);
  if (eq == 0 || eq == std::string_view::npos || colon == std::string_view::npos ||
      colon + 1 == text.size()) {
    throw UsageError(where +
                     ": expected NAME=ENGINE:LOCATION (NAME=nfs:nfs://host/export, "
                     "NAME=libnfs:nfs://host/export or NAME=path:DIR)");
  }
  KubeTarget t{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1, colon - eq - 1)),
               std::string(text.substr(colon + 1))};
  if (t.engine != "nfs" && t.engine != "libnfs" && t.engine != "path") {
    throw UsageError(where + ": engine '" + t.engine + "': expected nfs, libnfs or path");
  }
  if (t.engine != "path" && t.location.rfind("nfs://", 0) != 0) {
    throw UsageError(where + ": expected an nfs:// URL after " + t.engine + ":");
  }
  if (t.engine == "path" && t.location.front() != '/') {
    throw UsageError(where + ": expected an absolute directory after path:");
  }
  return t;
}

std::uint64_t defaultCapacityBytes(VolumeKind kind, std::uint32_t clients,
                                   std::uint64_t bytesPerClient) {
  const std::uint64_t laidOut =
      kind == VolumeKind::SharedRwx ? bytesPerClient * clients : bytesPerClient;
  const std::uint64_t wanted = laidOut + laidOut / 10 + kGiB;
  return (wanted + kGiB - 1) / kGiB * kGiB;
}

namespace {

void checkIdentity(const KubeArgs& a, KubeRun& run) {
  if (!isDnsLabel(a.name, kMaxRunName)) {
    throw UsageError("--name '" + a.name + "': expected at most " + std::to_string(kMaxRunName) +
                     " lowercase letters, digits and '-', starting with a letter (Kubernetes "
                     "derives the pods' names and host names from it)");
  }
  if (!a.ns.empty() && !isDnsLabel(a.ns, 63)) {
    throw UsageError("--namespace '" + a.ns + "': expected a namespace name (a DNS label)");
  }
  if (a.image.empty()) {
    throw UsageError(
        "--image is required: the image built from configs/kube/Containerfile, pushed to a "
        "registry the cluster pulls from");
  }
  for (char c : a.image) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      throw UsageError("--image '" + a.image + "': expected an image reference without spaces");
    }
  }
  if (a.clients < 1 || a.clients > kMaxClients) {
    throw UsageError("--clients " + std::to_string(a.clients) + ": expected 1.." +
                     std::to_string(kMaxClients) + " (one pod per client, one client per node)");
  }
  run.name = a.name;
  run.ns = a.ns;
  run.image = a.image;
  run.clients = static_cast<std::uint32_t>(a.clients);
}

std::vector<std::string> splitProfiles(const std::string& list) {
  std::vector<std::string> names;
  std::size_t from = 0;
  while (from <= list.size()) {
    const auto comma = std::min(list.find(',', from), list.size());
    if (comma > from) names.push_back(list.substr(from, comma - from));  // "a,,b": as compare
    from = comma + 1;
  }
  return names;
}

// Compare's own rules (bench/job/WorkloadOptions.h), so a pod never refuses
// what the render accepted.
KubeWorkload checkWorkload(const KubeArgs& a) {
  KubeWorkload w;
  try {
    if (!a.profiles.empty()) {
      checkProfiles(a.profiles);
      w.profiles = splitProfiles(a.profiles);
    }
    checkRuntime(a.runtime);
    checkRamp(a.ramp);
    checkSize(a.size);
    checkIodepth(a.iodepth);
    checkNumjobs(a.numjobs);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  w.runtime = a.runtime;
  w.ramp = a.ramp;
  w.size = a.size;
  w.iodepth = static_cast<std::uint32_t>(a.iodepth);
  w.numjobs = static_cast<std::uint32_t>(a.numjobs);
  w.verify = a.verify;
  return w;
}

// A name used twice would make two columns of one table indistinguishable.
void checkUniqueName(const std::vector<KubeTarget>& targets, const std::string& name,
                     const std::string& where) {
  for (const auto& t : targets) {
    if (t.name == name) {
      throw UsageError(where + ": the name " + name + " is taken; each target needs its own NAME");
    }
  }
}

// A path target is a directory inside the pod: only a volume puts storage
// there that outlives the container's own layer and is the one meant.
void checkOnVolume(const KubeTarget& t, const std::vector<KubeVolume>& volumes) {
  for (const auto& v : volumes) {
    const std::string m = v.mountPath();
    if (t.location == m || t.location.rfind(m + "/", 0) == 0) return;
  }
  throw UsageError("--target " + t.text() +
                   ": a path target in a pod must be on a volume: give --volume "
                   "NAME=rwx:STORAGECLASS or NAME=ephemeral:STORAGECLASS, whose target is "
                   "NAME=path:/mnt/NAME");
}

void collectTargets(const KubeArgs& a, KubeRun& run) {
  for (const auto& text : a.volumes) {
    KubeVolume v = parseVolume(text);
    for (const auto& other : run.volumes) {
      if (other.name == v.name)
        throw UsageError("--volume " + text + ": the name " + v.name + " is taken");
    }
    run.volumes.push_back(v);
  }
  for (const auto& text : a.targets) {
    KubeTarget t = parseTarget(text);
    checkUniqueName(run.targets, t.name, "--target " + text);
    if (t.engine == "path") checkOnVolume(t, run.volumes);
    run.targets.push_back(t);
  }
  for (const auto& v : run.volumes) {
    checkUniqueName(run.targets, v.name, "--volume " + v.name + "=" + volumeKindWord(v.kind));
    run.targets.push_back({v.name, "path", v.mountPath()});
  }
  if (run.targets.empty()) {
    throw UsageError(
        "no target: give --volume NAME=rwx:STORAGECLASS, --volume NAME=ephemeral:STORAGECLASS or "
        "--target NAME=nfs:URL (or libnfs:URL)");
  }
}

void sizeVolumes(KubeRun& run) {
  const std::uint64_t perClient = parseSize(run.workload.size, "--size") * run.workload.numjobs;
  for (auto& v : run.volumes) {
    if (v.capacityBytes == 0)
      v.capacityBytes = defaultCapacityBytes(v.kind, run.clients, perClient);
  }
}

// Without the device plugin's resource the pod has no /dev/infiniband, so
// an RPC-over-RDMA target could only fail in every pod at its start time.
void checkRdma(const KubeArgs& a, KubeRun& run) {
  if (!a.rdmaResource.empty() && !isResourceName(a.rdmaResource)) {
    throw UsageError("--rdma " + a.rdmaResource +
                     ": expected a device plugin's resource name DOMAIN/NAME, e.g. " +
                     std::string(kDefaultRdmaResource));
  }
  for (auto& t : run.targets) {
    if (t.location.find("proto=rdma") == std::string::npos) continue;
    if (a.rdmaResource.empty()) {
      throw UsageError("--target " + t.text() +
                       ": proto=rdma needs the RDMA device in the pod: add --rdma (or "
                       "--rdma RESOURCE)");
    }
    // The RDMA connection leaves from the pod's own address, so its GID is
    // the one of the pod's network (the rank fills in {pod-ip}). Not
    // under the MPI operator: ranks started over ssh do not inherit the
    // pod's environment, and take the route's source address instead.
    if (!a.mpiOperator && t.location.find("bind=") == std::string::npos) {
      t.location += "&bind={pod-ip}";
    }
  }
  run.rdmaResource = a.rdmaResource;
  run.hostNetwork = a.hostNetwork;
}

// Under MPI the ranks start at MPI's barrier; a rendered clock time is the
// Indexed Job's way to start together.
void planTiming(const KubeArgs& a, std::int64_t now, KubeRun& run) {
  run.renderedAt = now;
  run.mpiOperator = a.mpiOperator;
  if (a.mpiOperator) {
    if (a.startInGiven) {
      throw UsageError(
          "--start-in and --cell-slot are not for --mpi-operator: under MPI the ranks start "
          "each cell at MPI's barrier");
    }
    return;
  }
  if (a.startIn < 10 || a.startIn > 86400) {
    throw UsageError("--start-in " + std::to_string(a.startIn) +
                     ": expected 10..86400 seconds (the pods need time to be scheduled and to "
                     "pull the image before the first cell)");
  }
  const auto busy = static_cast<std::int64_t>(std::ceil(run.workload.ramp + run.workload.runtime));
  if (a.cellSlot != 0 && a.cellSlot <= busy) {
    throw UsageError("--cell-slot " + std::to_string(a.cellSlot) +
                     ": expected more than --ramp + " + "--runtime (" + std::to_string(busy) +
                     " s): a slot also holds the cell's set-up (connect, lay out the files)");
  }
  run.startAt = now + a.startIn;
  run.cellSlot = a.cellSlot != 0 ? a.cellSlot : busy + kCellSetupAllowanceS;
}

}  // namespace

KubeRun planKubeRun(const KubeArgs& a, std::int64_t nowUnixSeconds) {
  KubeRun run;
  checkIdentity(a, run);
  run.workload = checkWorkload(a);
  collectTargets(a, run);
  sizeVolumes(run);
  checkRdma(a, run);
  planTiming(a, nowUnixSeconds, run);
  return run;
}

}  // namespace nfsrdma::bench::kube
