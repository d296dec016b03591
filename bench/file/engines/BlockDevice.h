// A block device as a benchmark target (dev:/dev/nvme1n1): what it is (size,
// logical block size), what else uses it (mounts, swap, holders, partitions,
// the signatures libblkid finds), and the rule that decides whether the
// benchmark may write to it. Writes destroy what the device holds, so they
// need the user to name the device (--allow-destructive-write) and are
// refused while anything on this host uses it. The rule (writeRefusal) is
// pure, so that every refusal is tested on facts; probeDeviceUse gathers the
// facts from sysfs, /proc and libblkid.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace nfsrdma::bench {

struct BlockDeviceInfo {
  std::string path;        // as given: "/dev/nvme1n1", "/dev/disk/by-id/..."
  dev_t rdev = 0;          // what identifies it, whichever name it is given by
  std::string kernelName;  // "nvme1n1", from sysfs ("" when sysfs has no entry)
  std::uint64_t sizeBytes = 0;
  std::uint32_t logicalBlock = 512;
  bool readOnly = false;  // BLKROGET: the kernel refuses writes
};

// Opens path read-only and reads its size, logical block size and read-only
// flag. Throws std::invalid_argument naming path when it is missing, not a
// block device, or unreadable.
BlockDeviceInfo inspectBlockDevice(const std::string& path);

// Where probeDeviceUse reads; tests point it at a fake tree.
struct DeviceProbePaths {
  std::string sysDevBlock = "/sys/dev/block";  // MAJ:MIN -> the device's sysfs directory
  std::string mountinfo = "/proc/self/mountinfo";
  std::string swaps = "/proc/swaps";
};

// What uses a device on this host, each entry a short text for the message.
struct DeviceUse {
  std::vector<std::string> mounts;      // "/mnt/data (ext4, /dev/sdb1)"
  std::vector<std::string> swaps;       // "/dev/sdb2"
  std::vector<std::string> holders;     // "dm-0 (holds sdb)", at every depth of the stack
  std::vector<std::string> signatures;  // "ext4 (filesystem)", "gpt (partition table)"
  // Mounts and swaps of volumes stacked on the device or its partitions
  // (device-mapper, LVM, RAID: the holders, recursively, and their
  // partitions): "/srv (xfs, /dev/mapper/vg-lv) on dm-4, which holds dm-3,
  // which holds sdb1", "/dev/dm-5 on dm-5, which holds sdb".
  std::vector<std::string> stackedMounts;
  std::vector<std::string> stackedSwaps;
};

// The mounts, swaps and holders of the device and its partitions, and the
// mounts and swaps of the volumes stacked on them, found by following each
// sysfs holders/ directory to the holder's own (bounded depth).
DeviceUse probeDeviceUse(const BlockDeviceInfo& dev, const DeviceProbePaths& paths = {});
// The filesystem, RAID/LVM member and partition-table signatures libblkid
// finds at the start of path (a device or an image file); "" entries are
// never returned. Throws std::runtime_error when the probe cannot start.
std::vector<std::string> probeSignatures(const std::string& path);

// What the user allowed: the devices named by --allow-destructive-write
// (each resolved to its rdev) and --force.
struct WritePermission {
  struct Named {
    std::string given;
    dev_t rdev = 0;
  };
  std::vector<Named> devices;
  bool force = false;
};

// Resolves the names of --allow-destructive-write. Throws
// std::invalid_argument naming one that is missing or not a block device.
WritePermission resolveWritePermission(const std::vector<std::string>& names, bool force);

// Why the benchmark must not write to dev (target: its report name), or ""
// when it may: the device must be named in the permission; it must not be
// read-only, mounted or swap, nor have a volume stacked on it that is
// mounted or swap (even with --force: the kernel is using it); and without
// --force it must have no holders and no signature.
std::string writeRefusal(const std::string& target, const BlockDeviceInfo& dev,
                         const DeviceUse& use, const WritePermission& permission);

}  // namespace nfsrdma::bench
