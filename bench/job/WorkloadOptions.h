// One declaration of each workload option the bench commands take (`file`,
// `compare`, `kube`, `anchor`): its name, its help text, its default and
// the rule its value must meet. A command adds the ones it takes
// (addRuntimeOption, ...) or file's and compare's whole set
// (addWorkloadOptions); the variable an adder is given holds the command's
// default (kube's 30 s cells, anchor's 5 s runs) and the help says the same
// thing in every command. Each check* is the only test of its value, so a
// kube manifest never asks its pods for a value compare would refuse. They
// throw std::invalid_argument naming the option; a command turns that into
// tool::UsageError (exit 2) where it checks its command line.
#pragma once

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/job/FileProfile.h"

namespace nfsrdma::bench {

// --size SIZE: bytes per job (k/m/g/t). An empty size is file's and
// compare's default: 64m, a dev: target the device split across the jobs
// (--help shows it as 64m).
void addSizeOption(boost::program_options::options_description& opts, std::string& size);
// --runtime SECONDS per run, time-based, after the ramp.
void addRuntimeOption(boost::program_options::options_description& opts, double& seconds);
// --ramp SECONDS run before measuring.
void addRampOption(boost::program_options::options_description& opts, double& seconds);
// --iodepth N requests in flight per job (0: the profile's). Signed, here
// and in --numjobs: boost reads "-1" into an unsigned type as 2^32-1.
void addIodepthOption(boost::program_options::options_description& opts, std::int64_t& iodepth);
// --bs SIZE, the block size instead of the profile's (file and tune: one
// profile; compare's profiles keep theirs).
void addBlockSizeOption(boost::program_options::options_description& opts, std::string& bs);
// --numjobs N jobs (threads) per process: per rank of a many-rank run.
void addNumjobsOption(boost::program_options::options_description& opts, std::int64_t& numjobs);
// --verify: check every byte read and written.
void addVerifyOption(boost::program_options::options_description& opts, bool& verify);
// --profiles LIST (compare, kube): a comma list; empty: all seven.
void addProfilesOption(boost::program_options::options_description& opts, std::string& profiles);

// The rules: each returns the value as the run takes it.
std::uint64_t checkSize(const std::string& text);        // a size of more than 0 bytes
std::chrono::milliseconds checkRuntime(double seconds);  // (0, 86400]
std::chrono::milliseconds checkRamp(double seconds);     // [0, 3600]
std::uint32_t checkIodepth(std::int64_t iodepth);        // 0..1024
std::uint32_t checkNumjobs(std::int64_t numjobs);        // 1..256
std::uint32_t checkBlockSize(std::uint64_t bytes);       // 512..64m, a multiple of 512
// --profiles: the profiles named, in order (all seven when empty).
std::vector<FileProfile> checkProfiles(const std::string& list);

// The workload of `file` and `compare`, as given.
struct WorkloadArgs {
  std::string size;  // empty: 64m (a dev: target: the device split across the jobs)
  double runtime = 2;
  std::string ioBytes;
  std::int64_t iodepth = 0;
  std::string bs;  // --bs; empty: the profile's
  std::int64_t numjobs = 1;
  double ramp = 0.3;
  int direct = 1;
  std::uint32_t nrfiles = 1;
  // Signed: boost reads "-1" into an unsigned type as 2^64-1 without a word.
  std::int64_t seed = 1;
  int rwmixread = -1;
  bool verify = false;
  bool sharedFile = false;
  std::string client = "per-job";  // --client: per-job or shared
  bool dropServerCache = false;
  std::string workDir = "/var/tmp";
  std::uint32_t readsPerCompound = 1;              // embedded nfs-tcp: queued READs per COMPOUND
  std::vector<std::string> allowDestructiveWrite;  // dev: devices the run may write
  bool force = false;
  std::int64_t sampleIntervalMs = 250;  // --sample-interval MS; 0: off
};

// Adds --size, --runtime, --io-bytes, --iodepth, --numjobs, --ramp, --direct,
// --nrfiles, --seed, --rwmixread, --verify, --shared-file, --client,
// --drop-server-cache, --work-dir, --reads-per-compound,
// --allow-destructive-write, --force, --sample-interval.
void addWorkloadOptions(boost::program_options::options_description& opts, WorkloadArgs& a);
// Throws std::invalid_argument naming the option.
FileOptions toFileOptions(const WorkloadArgs& a);

}  // namespace nfsrdma::bench
