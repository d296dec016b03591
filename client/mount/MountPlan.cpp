#include "client/mount/MountPlan.h"

#include <sstream>
#include <stdexcept>

namespace nfsrdma::mount {
namespace {

// nconnect (several transports per mount) arrived for TCP in Linux 5.3; for
// RDMA the kernel accepts it from 5.11 on (earlier kernels reject the option).
bool nconnectSupported(const std::string& proto, const HostFacts& f) {
  const int v = f.kernelMajor * 1000 + f.kernelMinor;
  return proto == "tcp" ? v >= 5003 : v >= 5011;
}

bool goodPath(const std::string& p) {
  return !p.empty() && p.front() == '/' && p.find_first_of(" \t\n,") == std::string::npos;
}

std::string joinOptions(const std::vector<std::string>& opts) {
  std::string out;
  for (const auto& o : opts) {
    if (!out.empty()) out += ',';
    out += o;
  }
  return out;
}

}  // namespace

std::vector<ExistingMount> nfsMountsOf(std::string_view procMounts, std::string_view server) {
  std::vector<ExistingMount> out;
  std::istringstream in{std::string(procMounts)};
  std::string line;
  for (int n = 0; n < 100000 && std::getline(in, line); ++n) {
    std::istringstream fields(line);
    ExistingMount m;
    std::string type;
    fields >> m.source >> m.mountPoint >> type >> m.options;
    if (type != "nfs" && type != "nfs4") continue;
    const auto colon = m.source.rfind(":/");
    if (colon == std::string::npos) continue;
    std::string host = m.source.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (host == server) out.push_back(std::move(m));
  }
  return out;
}

MountPlan planMount(const MountRequest& r, const HostFacts& facts) {
  if (r.server.empty() || r.server.find_first_of(" \t/,") != std::string::npos) {
    throw std::invalid_argument("server '" + r.server + "': expected a host name or address");
  }
  if (!goodPath(r.exportPath)) throw std::invalid_argument("export '" + r.exportPath + "': expected an absolute path");
  if (!goodPath(r.mountPoint)) {
    throw std::invalid_argument("mount point '" + r.mountPoint + "': expected an absolute path");
  }
  if (r.proto != "rdma" && r.proto != "tcp" && r.proto != "both") {
    throw std::invalid_argument("proto '" + r.proto + "': expected rdma, tcp or both");
  }
  if (r.vers != "4.2" && r.vers != "4.1" && r.vers != "4.0" && r.vers != "4" && r.vers != "3") {
    throw std::invalid_argument("vers '" + r.vers + "': expected 3, 4, 4.0, 4.1 or 4.2");
  }
  for (auto [name, v] : {std::pair{"rsize", r.rsize}, std::pair{"wsize", r.wsize}}) {
    if (v && (*v < 4096 || *v > (1U << 20) || (*v & (*v - 1)) != 0)) {
      throw std::invalid_argument(std::string(name) + "=" + std::to_string(*v) +
                                  ": expected a power of two from 4096 to 1048576");
    }
  }
  if (r.nconnect && (*r.nconnect < 1 || *r.nconnect > 16)) {
    throw std::invalid_argument("nconnect=" + std::to_string(*r.nconnect) + ": expected 1 to 16");
  }
  if (r.port && *r.port == 0) throw std::invalid_argument("port 0: expected 1 to 65535");

  MountPlan plan;
  const auto existing = nfsMountsOf(facts.mounts, r.server);
  std::vector<std::string> protos;
  if (r.proto == "both") {
    protos = {"rdma", "tcp"};
  } else {
    protos = {r.proto};
  }
  const bool needNoShareCache = protos.size() > 1 || !existing.empty();
  if (!existing.empty()) {
    plan.notes.push_back("'" + r.server + "' is already mounted (" + existing.front().source + " on " +
                         existing.front().mountPoint + "): adding nosharecache, or the kernel would reuse "
                         "that mount's transport instead of making a new one");
  } else if (protos.size() > 1) {
    plan.notes.push_back("both transports side by side: nosharecache keeps them apart (one superblock and "
                         "one transport each)");
  }
  for (const auto& proto : protos) {
    PlannedMount m;
    m.proto = proto;
    m.source = r.server + ":" + r.exportPath;
    m.mountPoint = protos.size() > 1 ? r.mountPoint + "-" + proto : r.mountPoint;
    std::vector<std::string> opts{"vers=" + r.vers, "proto=" + proto};
    if (proto == "rdma") {
      opts.push_back("port=" + std::to_string(r.port.value_or(20049)));
      if (!facts.rdmaClientModule) {
        plan.problems.push_back("the kernel's NFS/RDMA client module is not loaded: run 'modprobe rpcrdma' "
                                "(older kernels: 'modprobe xprtrdma')");
      }
    } else if (r.port) {
      opts.push_back("port=" + std::to_string(*r.port));
    }
    if (r.rsize) opts.push_back("rsize=" + std::to_string(*r.rsize));
    if (r.wsize) opts.push_back("wsize=" + std::to_string(*r.wsize));
    if (r.nconnect) {
      if (nconnectSupported(proto, facts)) {
        opts.push_back("nconnect=" + std::to_string(*r.nconnect));
      } else {
        plan.notes.push_back("nconnect dropped for proto=" + proto + ": kernel " + std::to_string(facts.kernelMajor) +
                             "." + std::to_string(facts.kernelMinor) + " does not support it for this transport");
      }
    }
    if (needNoShareCache) opts.push_back("nosharecache");
    for (const auto& e : r.extraOptions) opts.push_back(e);
    m.options = joinOptions(opts);
    m.command = "mount -t nfs -o " + m.options + " " + m.source + " " + m.mountPoint;
    m.fstabLine = m.source + " " + m.mountPoint + " nfs " + m.options + ",_netdev 0 0";
    for (const auto& e : existing) {
      if (e.mountPoint == m.mountPoint) {
        plan.problems.push_back(m.mountPoint + " already has " + e.source + " mounted on it");
      }
    }
    plan.mounts.push_back(std::move(m));
  }

  // Kubernetes: a StorageClass (for dynamic provisioners that pass mountOptions)
  // and a static PersistentVolume carrying the same options.
  const PlannedMount& first = plan.mounts.front();
  std::ostringstream k;
  k << "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: nfs-" << first.proto
    << "\nprovisioner: kubernetes.io/no-provisioner\nmountOptions:\n";
  std::istringstream opts(first.options);
  std::string o;
  while (std::getline(opts, o, ',')) k << "  - " << o << "\n";
  k << "---\napiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: nfs-" << first.proto
    << "-pv\nspec:\n  capacity:\n    storage: 1Ti\n  accessModes:\n    - ReadWriteMany\n"
    << "  persistentVolumeReclaimPolicy: Retain\n  storageClassName: nfs-" << first.proto << "\n  mountOptions:\n";
  std::istringstream opts2(first.options);
  while (std::getline(opts2, o, ',')) k << "    - " << o << "\n";
  k << "  nfs:\n    server: " << r.server << "\n    path: " << r.exportPath << "\n";
  plan.kubernetesYaml = k.str();
  return plan;
}

std::vector<std::string> planUnmount(const MountRequest& r) {
  std::vector<std::string> out;
  if (r.proto == "both") {
    out.push_back("umount " + r.mountPoint + "-rdma");
    out.push_back("umount " + r.mountPoint + "-tcp");
  } else {
    out.push_back("umount " + r.mountPoint);
  }
  return out;
}

}  // namespace nfsrdma::mount
