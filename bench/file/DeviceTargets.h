// How a run uses a dev: target. The device is the jobs' one shared file:
// job g works on bytes [g x size, (g+1) x size) of it, as fio's jobs on one
// device with offset_increment, so that together they cover the working set
// and never overlap. Without --size the jobs split the whole device. Before
// anything runs, each dev: target's plan is checked and, when the run
// writes it, so is the user's permission (writeRefusal).
#pragma once

#include <string>
#include <vector>

#include "bench/file/engines/Engine.h"
#include "bench/job/FileProfile.h"

namespace nfsrdma::bench {

// Checks every dev: target of targets against the profiles and options and
// marks the ones the run writes (a profile writes, or --verify lays the
// pattern out for its reads) as deviceWritable. Throws
// std::invalid_argument naming the target and what is wrong: more than one
// file per job, --size beyond the device, a block size or range that is not
// a multiple of its logical block, a write without permission or refused
// (writeRefusal), --verify of reads without a write to lay the pattern out.
// paths: where the device's users are read (tests give a fake tree).
void prepareDeviceTargets(std::vector<TargetSpec>& targets,
                          const std::vector<FileProfile>& profiles, const FileOptions& options,
                          const DeviceProbePaths& paths = {});

// The options a dev: target runs with: one shared file (the device), each
// job's range --size bytes or (without --size) the device split across all
// jobs of all clients, rounded down to whole 4 KiB and logical blocks.
FileOptions optionsOnDevice(const TargetSpec& target, const FileOptions& options);

// True the first time a run asks to lay this device's file set out (same
// device, seed, range size and sharing jobs): a device holds one set, and
// one layout per run serves every cell. Thread-safe; a caller whose layout
// then fails calls forgetDeviceLayout, so that the next cell tries again.
bool claimDeviceLayout(const TargetSpec& target, const FileOptions& options);
void forgetDeviceLayout(const TargetSpec& target, const FileOptions& options);

}  // namespace nfsrdma::bench
