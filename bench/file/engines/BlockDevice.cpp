#include "bench/file/engines/BlockDevice.h"

#include <blkid/blkid.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "verbs/UniqueFd.h"
#include "verbs/VerbsError.h"

namespace nfsrdma::bench {
namespace {

namespace fs = std::filesystem;

std::string majMin(dev_t d) {
  return std::to_string(major(d)) + ":" + std::to_string(minor(d));
}

std::string firstLine(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

// The device and its partitions as sysfs lists them: kernel name -> MAJ:MIN.
struct SysfsFamily {
  std::vector<std::pair<std::string, std::string>> members;  // the device first
  std::vector<std::string> holders;
};

SysfsFamily familyOf(const BlockDeviceInfo& dev, const DeviceProbePaths& paths) {
  SysfsFamily f;
  f.members.emplace_back(dev.kernelName, majMin(dev.rdev));
  const fs::path dir = fs::path(paths.sysDevBlock) / majMin(dev.rdev);
  std::error_code ec;
  const auto addHolders = [&](const fs::path& d, const std::string& of) {
    std::error_code e;
    for (const auto& h : fs::directory_iterator(d / "holders", e)) {
      f.holders.push_back(h.path().filename().string() + " (holds " + of + ")");
    }
  };
  addHolders(dir, dev.kernelName);
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::error_code e;
    if (!fs::exists(entry.path() / "partition", e)) continue;
    const std::string name = entry.path().filename().string();
    f.members.emplace_back(name, firstLine(entry.path() / "dev"));
    addHolders(entry.path(), name);
  }
  return f;
}

// mountinfo: "36 35 8:17 / /mnt rw,relatime shared:1 - ext4 /dev/sdb1 rw"
void addMounts(DeviceUse& use, const SysfsFamily& family, const std::string& mountinfo) {
  std::ifstream in(mountinfo);
  for (std::string line; std::getline(in, line);) {
    std::istringstream s(line);
    std::string id, parent, devno, root, point, word;
    s >> id >> parent >> devno >> root >> point;
    while (s >> word && word != "-") {
    }
    std::string type, source;
    s >> type >> source;
    for (const auto& [name, mm] : family.members) {
      if (mm == devno) use.mounts.push_back(point + " (" + type + ", " + source + ")");
    }
  }
}

// /proc/swaps: "Filename Type Size Used Priority", one line per swap area.
void addSwaps(DeviceUse& use, const SysfsFamily& family, const std::string& swaps) {
  std::ifstream in(swaps);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string file;
    s >> file;
    if (file.empty()) continue;
    struct stat st {};
    const bool isDevice = ::stat(file.c_str(), &st) == 0 && S_ISBLK(st.st_mode);
    for (const auto& [name, mm] : family.members) {
      const bool same = isDevice ? majMin(st.st_rdev) == mm
                                 : !name.empty() && fs::path(file).filename() == name;
      if (same) use.swaps.push_back(file);
    }
  }
}

struct ProbeDeleter {
  void operator()(blkid_struct_probe* p) const { blkid_free_probe(p); }
};

std::string lookup(blkid_probe pr, const char* key) {
  const char* v = nullptr;
  std::size_t len = 0;
  if (blkid_probe_lookup_value(pr, key, &v, &len) != 0 || v == nullptr) return {};
  return std::string(v, strnlen(v, len));
}

using verbs::errnoText;

}  // namespace

BlockDeviceInfo inspectBlockDevice(const std::string& path) {
  BlockDeviceInfo d;
  d.path = path;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    throw std::invalid_argument("dev:" + path + ": cannot open: " + errnoText(errno) +
                                " (expected a block device such as /dev/nvme1n1)");
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISBLK(st.st_mode)) {
    throw std::invalid_argument("dev:" + path +
                                ": not a block device (for a directory or file system use path:)");
  }
  d.rdev = st.st_rdev;
  std::uint64_t bytes = 0;
  int sector = 0;
  int ro = 0;
  if (::ioctl(fd.get(), BLKGETSIZE64, &bytes) != 0 || ::ioctl(fd.get(), BLKSSZGET, &sector) != 0 ||
      ::ioctl(fd.get(), BLKROGET, &ro) != 0) {
    throw std::invalid_argument("dev:" + path + ": reading its size: " + errnoText(errno));
  }
  d.sizeBytes = bytes;
  d.logicalBlock = static_cast<std::uint32_t>(sector);
  d.readOnly = ro != 0;
  std::error_code ec;
  const fs::path link = fs::read_symlink(fs::path("/sys/dev/block") / majMin(d.rdev), ec);
  if (!ec) d.kernelName = link.filename().string();
  return d;
}

DeviceUse probeDeviceUse(const BlockDeviceInfo& dev, const DeviceProbePaths& paths) {
  DeviceUse use;
  const SysfsFamily family = familyOf(dev, paths);
  use.holders = family.holders;
  addMounts(use, family, paths.mountinfo);
  addSwaps(use, family, paths.swaps);
  use.signatures = probeSignatures(dev.path);
  return use;
}

std::vector<std::string> probeSignatures(const std::string& path) {
  std::unique_ptr<blkid_struct_probe, ProbeDeleter> pr(blkid_new_probe_from_filename(path.c_str()));
  if (!pr) throw std::runtime_error("libblkid: cannot probe " + path + ": " + errnoText(errno));
  blkid_probe_enable_superblocks(pr.get(), 1);
  blkid_probe_set_superblocks_flags(pr.get(), BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE);
  blkid_probe_enable_partitions(pr.get(), 1);
  blkid_probe_set_partitions_flags(pr.get(), BLKID_PARTS_MAGIC);
  std::vector<std::string> found;
  // As wipefs lists them: every signature of every chain, one per step
  // (bounded: a device carries a handful).
  for (int i = 0; i < 64 && blkid_do_probe(pr.get()) == 0; ++i) {
    if (const std::string pt = lookup(pr.get(), "PTTYPE"); !pt.empty()) {
      found.push_back(pt + " (partition table)");
    } else if (const std::string type = lookup(pr.get(), "TYPE"); !type.empty()) {
      const std::string usage = lookup(pr.get(), "USAGE");
      found.push_back(type + " (" + (usage.empty() ? std::string("signature") : usage) + ")");
    }
  }
  return found;
}

WritePermission resolveWritePermission(const std::vector<std::string>& names, bool force) {
  WritePermission p;
  p.force = force;
  for (const auto& n : names) {
    struct stat st {};
    if (::stat(n.c_str(), &st) != 0) {
      throw std::invalid_argument("--allow-destructive-write " + n + ": " + errnoText(errno) +
                                  " (expected the block device the dev: target names)");
    }
    if (!S_ISBLK(st.st_mode)) {
      throw std::invalid_argument("--allow-destructive-write " + n + ": not a block device");
    }
    p.devices.push_back({n, st.st_rdev});
  }
  return p;
}

namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
  return s;
}

std::string notNamedReason(const BlockDeviceInfo& dev, const WritePermission& permission) {
  std::string why = "writes destroy the data on it; to allow them name this device with "
                    "--allow-destructive-write " + dev.path;
  if (!permission.devices.empty()) {
    std::vector<std::string> given;
    for (const auto& n : permission.devices) given.push_back(n.given);
    why += " (--allow-destructive-write names " + joined(given) + ", not this device)";
  }
  return why;
}

}  // namespace

std::string writeRefusal(const std::string& target, const BlockDeviceInfo& dev,
                         const DeviceUse& use, const WritePermission& permission) {
  const std::string who = "target " + target + " (dev:" + dev.path + "): ";
  bool named = false;
  for (const auto& n : permission.devices) named = named || n.rdev == dev.rdev;
  if (!named) return who + notNamedReason(dev, permission);
  if (dev.readOnly) return who + "the device is read-only (BLKROGET)";
  // What the kernel is using now is never written, --force or not: the
  // benchmark would corrupt a live file system or swap under its users.
  if (!use.mounts.empty()) {
    return who + "mounted at " + joined(use.mounts) +
           ": a mounted device is never written (unmount it first; --force does not override this)";
  }
  if (!use.swaps.empty()) {
    return who + "in use as swap (" + joined(use.swaps) +
           "): it is never written (swapoff first; --force does not override this)";
  }
  if (permission.force) return {};
  if (!use.holders.empty()) {
    return who + "held by " + joined(use.holders) +
           " (device-mapper, RAID or LVM on top of it): writes would corrupt what it serves; "
           "release it, or give --force";
  }
  if (!use.signatures.empty()) {
    return who + "carries the signature " + joined(use.signatures) +
           ": writes would destroy what it holds; wipe it first (wipefs -a " + dev.path +
           ") or give --force";
  }
  return {};
}

}  // namespace nfsrdma::bench
