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
#include <set>
#include <sstream>
#include <stdexcept>

#include "util/ErrnoText.h"
#include "util/UniqueFd.h"

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

// A block device of the family: the device, a partition of it, or a volume
// stacked on either (a holder, its holders and their partitions, at any
// depth), and how it relates to the device.
struct FamilyMember {
  std::string name;    // kernel name: "sdz1", "dm-4"
  std::string majMin;  // "259:7"; "" when sysfs gives none
  // Empty for the device and its partitions; for a stacked volume how it
  // sits on them: "dm-4, which holds dm-3, which holds sdz1".
  std::string stackedOn;
};

struct SysfsFamily {
  std::vector<FamilyMember> members;  // the device first
  std::vector<std::string> holders;   // "dm-3 (holds sdz1)", at every depth
};

// Stacks deeper than this are not followed (LVM on RAID on a partition is 3).
constexpr int kMaxStackDepth = 8;

class FamilyWalk {
 public:
  explicit FamilyWalk(SysfsFamily& f) : f_(f) {}

  // A device's sysfs directory dir (the device is already a member): its
  // partitions, and every holder of either with what is stacked on it.
  // relation: how the device relates to the target ("" for the target).
  void walk(const fs::path& dir, const std::string& name, const std::string& relation, int depth) {
    (void)firstVisit(dir);
    addHoldersOf(dir, name, relation, depth);
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      std::error_code e;
      if (!fs::exists(entry.path() / "partition", e)) continue;
      const std::string part = entry.path().filename().string();
      const std::string partRelation =
          relation.empty() ? "" : part + ", a partition of " + relation;
      f_.members.push_back({part, firstLine(entry.path() / "dev"), partRelation});
      addHoldersOf(entry.path(), part, partRelation, depth);
    }
  }

 private:
  // dir/holders/NAME is a link to the holder's own sysfs directory. A volume
  // over two of the family (RAID over two partitions) is walked once.
  void addHoldersOf(const fs::path& dir, const std::string& name, const std::string& relation,
                    int depth) {
    if (depth >= kMaxStackDepth) return;
    std::error_code ec;
    for (const auto& h : fs::directory_iterator(dir / "holders", ec)) {
      const std::string holder = h.path().filename().string();
      f_.holders.push_back(holder + " (holds " + name + ")");
      if (!firstVisit(h.path())) continue;
      const std::string stacked = holder + ", which holds " + (relation.empty() ? name : relation);
      f_.members.push_back({holder, firstLine(h.path() / "dev"), stacked});
      walk(h.path(), holder, stacked, depth + 1);
    }
  }

  bool firstVisit(const fs::path& dir) {
    std::error_code ec;
    fs::path real = fs::weakly_canonical(dir, ec);
    if (ec) real = dir;
    return visited_.insert(real.string()).second;
  }

  SysfsFamily& f_;
  std::set<std::string> visited_;  // sysfs directories walked
};

SysfsFamily familyOf(const BlockDeviceInfo& dev, const DeviceProbePaths& paths) {
  SysfsFamily f;
  f.members.push_back({dev.kernelName, majMin(dev.rdev), ""});
  FamilyWalk(f).walk(fs::path(paths.sysDevBlock) / majMin(dev.rdev), dev.kernelName, "", 0);
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
    for (const auto& m : family.members) {
      if (m.majMin != devno) continue;
      const std::string what = point + " (" + type + ", " + source + ")";
      if (m.stackedOn.empty()) {
        use.mounts.push_back(what);
      } else {
        use.stackedMounts.push_back(what + " on " + m.stackedOn);
      }
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
    for (const auto& m : family.members) {
      const bool same = isDevice ? majMin(st.st_rdev) == m.majMin
                                 : !m.name.empty() && fs::path(file).filename() == m.name;
      if (!same) continue;
      if (m.stackedOn.empty()) {
        use.swaps.push_back(file);
      } else {
        use.stackedSwaps.push_back(file + " on " + m.stackedOn);
      }
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

using util::errnoText;

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

std::string joined(const std::vector<std::string>& items, const std::string& separator = ", ") {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : separator) + i;
  return s;
}

std::string notNamedReason(const BlockDeviceInfo& dev, const WritePermission& permission) {
  std::string why =
      "writes destroy the data on it; to allow them name this device with "
      "--allow-destructive-write " +
      dev.path;
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
  // A volume stacked on it has the same users, and they read through it.
  if (!use.stackedMounts.empty()) {
    return who + "a volume stacked on it is mounted at " + joined(use.stackedMounts, "; ") +
           "; a device under a mounted volume is never written (unmount it first; --force does "
           "not override this)";
  }
  if (!use.stackedSwaps.empty()) {
    return who + "a volume stacked on it is in use as swap (" + joined(use.stackedSwaps, "; ") +
           "); a device under swap is never written (swapoff first; --force does not override "
           "this)";
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
