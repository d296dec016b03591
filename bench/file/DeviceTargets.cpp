#include "bench/file/DeviceTargets.h"

#include <sys/sysmacros.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <stdexcept>

namespace nfsrdma::bench {
namespace {

std::string bytesText(std::uint64_t b) {
  return formatBytes(static_cast<double>(b));
}

// A range's start and length must suit O_DIRECT on the device: whole 4 KiB
// (the pages the buffers are aligned to) and whole logical blocks.
std::uint64_t rangeUnit(const TargetSpec& t) {
  return std::max<std::uint64_t>(4096, t.device.logicalBlock);
}

std::uint32_t jobsSharing(const FileOptions& o) {
  return std::max(o.sharingJobs, o.numjobs);
}

// "target local (dev:/dev/sdb): ", how every refusal of a dev: target begins.
std::string whoIs(const TargetSpec& t) {
  return "target " + t.name + " (dev:" + t.location + "): ";
}

void checkLayoutOf(const TargetSpec& t, const FileOptions& o) {
  const std::string who = whoIs(t);
  if (o.nrfiles != 1) {
    throw std::invalid_argument(who + "--nrfiles " + std::to_string(o.nrfiles) +
                                ": a device is one file shared by the jobs (use --nrfiles 1)");
  }
  const FileOptions d = optionsOnDevice(t, o);
  const std::uint64_t all = d.sizeBytes * jobsSharing(d);
  if (d.sizeBytes == 0 || all > t.device.sizeBytes) {
    throw std::invalid_argument(who + "--size " + bytesText(o.sizeBytes) + " x " +
                                std::to_string(jobsSharing(o)) + " jobs = " + bytesText(all) +
                                " exceeds the device's " + bytesText(t.device.sizeBytes));
  }
  if (o.sizeGiven && d.sizeBytes % rangeUnit(t) != 0) {
    throw std::invalid_argument(who + "--size " + bytesText(o.sizeBytes) +
                                " is not a multiple of " + bytesText(rangeUnit(t)) +
                                " (4 KiB and the device's logical block), where each job's range "
                                "must start");
  }
}

void checkBlocksOf(const TargetSpec& t, const FileProfile& p) {
  if (p.blockSize % t.device.logicalBlock == 0) return;
  throw std::invalid_argument(whoIs(t) + p.name + "'s " + bytesText(p.blockSize) +
                              " requests are not a multiple of its " +
                              std::to_string(t.device.logicalBlock) + " B logical block");
}

// The run writes t when a profile writes, or when --verify lays the pattern out.
void authorizeWrite(TargetSpec& t, const std::vector<FileProfile>& profiles, const FileOptions& o,
                    const WritePermission& permission, const DeviceProbePaths& paths) {
  const bool profilesWrite = std::any_of(profiles.begin(), profiles.end(),
                                         [](const FileProfile& p) { return p.writes(); });
  if (!profilesWrite && !o.verify) return;
  std::string why = writeRefusal(t.name, t.device, probeDeviceUse(t.device, paths), permission);
  if (!why.empty()) {
    // Reads alone write nothing; --verify is what asked for the pattern.
    if (!profilesWrite) {
      why +=
          " (the profiles only read, but --verify checks the bench's data pattern, which a "
          "write must first lay out on the device; leave out --verify to read it as it is)";
    }
    throw std::invalid_argument(why);
  }
  t.deviceWritable = true;
}

std::string layoutKey(const TargetSpec& t, const FileOptions& o) {
  const FileOptions d = optionsOnDevice(t, o);
  return std::to_string(major(t.device.rdev)) + ":" + std::to_string(minor(t.device.rdev)) + " s" +
         std::to_string(d.seed) + " b" + std::to_string(d.sizeBytes) + " j" +
         std::to_string(jobsSharing(d));
}

std::mutex layoutsMutex;
std::set<std::string> layouts;  // guarded by layoutsMutex

}  // namespace

void prepareDeviceTargets(std::vector<TargetSpec>& targets,
                          const std::vector<FileProfile>& profiles, const FileOptions& options,
                          const DeviceProbePaths& paths) {
  bool any = false;
  for (const auto& t : targets) any = any || t.isDevice();
  if (!any) return;
  const WritePermission permission =
      resolveWritePermission(options.destructiveWrites, options.force);
  for (auto& t : targets) {
    if (!t.isDevice()) continue;
    checkLayoutOf(t, options);
    for (const auto& p : profiles) checkBlocksOf(t, p);
    authorizeWrite(t, profiles, options, permission, paths);
  }
}

FileOptions optionsOnDevice(const TargetSpec& target, const FileOptions& options) {
  FileOptions o = options;
  o.sharedFile = true;
  o.sharingJobs = jobsSharing(options);
  if (!o.sizeGiven) {
    const std::uint64_t unit = rangeUnit(target);
    const std::uint64_t each = target.device.sizeBytes / o.sharingJobs / unit * unit;
    // The largest working set a run lays out (kMaxWorkingSetBytes): a whole
    // large device within it.
    o.sizeBytes = std::min<std::uint64_t>(each, kMaxWorkingSetBytes / o.sharingJobs / unit * unit);
  }
  return o;
}

bool claimDeviceLayout(const TargetSpec& target, const FileOptions& options) {
  std::lock_guard lock(layoutsMutex);
  return layouts.insert(layoutKey(target, options)).second;
}

void forgetDeviceLayout(const TargetSpec& target, const FileOptions& options) {
  std::lock_guard lock(layoutsMutex);
  layouts.erase(layoutKey(target, options));
}

}  // namespace nfsrdma::bench
