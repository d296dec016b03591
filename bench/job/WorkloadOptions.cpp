#include "bench/job/WorkloadOptions.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace po = boost::program_options;

namespace nfsrdma::bench {
namespace {

// "0.3" in --help, not boost's 0.29999999999999999.
std::string shown(double seconds) {
  std::ostringstream out;
  out << seconds;
  return out.str();
}

std::chrono::milliseconds millis(double seconds) {
  return std::chrono::milliseconds(std::llround(seconds * 1000));
}

}  // namespace

void addSizeOption(po::options_description& opts, std::string& size) {
  // Empty: file's and compare's 64m, shown as such; the value stays empty,
  // which is how a dev: target knows --size was not given.
  opts.add_options()("size", po::value(&size)->default_value(size, size.empty() ? "64m" : size),
                     "bytes per job (k/m/g/t, binary), split across its --nrfiles files; a dev: "
                     "target without --size: the device split across the jobs");
}

void addRuntimeOption(po::options_description& opts, double& seconds) {
  opts.add_options()("runtime", po::value(&seconds)->default_value(seconds, shown(seconds)),
                     "seconds per run (per cell), time-based, after the ramp; (0, 86400]");
}

void addRampOption(po::options_description& opts, double& seconds) {
  opts.add_options()("ramp", po::value(&seconds)->default_value(seconds, shown(seconds)),
                     "seconds run before measuring; [0, 3600]");
}

void addIodepthOption(po::options_description& opts, std::int64_t& iodepth) {
  opts.add_options()("iodepth", po::value(&iodepth)->default_value(iodepth),
                     "requests in flight per job, 0..1024 (0: the profile's: 32 for 4k, 8 for "
                     "128k, 2 for 4m)");
}

void addBlockSizeOption(po::options_description& opts, std::string& bs) {
  opts.add_options()("bs", po::value(&bs),
                     "block size instead of the profile's, 512..64m in multiples of 512 (e.g. "
                     "--profile 4m-read --bs 1m runs 1 MiB sequential reads as 1m-read)");
}

void addNumjobsOption(po::options_description& opts, std::int64_t& numjobs) {
  opts.add_options()("numjobs", po::value(&numjobs)->default_value(numjobs),
                     "jobs per rank, 1..256: threads, each with its own files and (--client "
                     "per-job) its own connection, context and ring");
}

void addVerifyOption(po::options_description& opts, bool& verify) {
  opts.add_options()("verify", po::bool_switch(&verify),
                     "check every byte read; read back and check everything written (not a "
                     "throughput run)");
}

void addProfilesOption(po::options_description& opts, std::string& profiles) {
  opts.add_options()("profiles", po::value(&profiles),
                     "comma list (default: all seven: 4k-randread ... randrw)");
}

std::uint64_t checkSize(const std::string& text) {
  const std::uint64_t bytes = parseSize(text, "--size");
  if (bytes == 0)
    throw std::invalid_argument("--size '" + text + "': must be more than 0 bytes per job");
  return bytes;
}

std::chrono::milliseconds checkRuntime(double seconds) {
  if (!(seconds > 0) || seconds > 86400)
    throw std::invalid_argument("--runtime must be in (0, 86400] seconds");
  return millis(seconds);
}

std::chrono::milliseconds checkRamp(double seconds) {
  if (!(seconds >= 0) || seconds > 3600)
    throw std::invalid_argument("--ramp must be in [0, 3600] seconds");
  return millis(seconds);
}

std::uint32_t checkIodepth(std::int64_t iodepth) {
  if (iodepth < 0 || iodepth > 1024)
    throw std::invalid_argument("--iodepth must be 0..1024 (0: the profile's)");
  return static_cast<std::uint32_t>(iodepth);
}

std::uint32_t checkBlockSize(std::uint64_t bytes) {
  // O_DIRECT needs whole sectors; above 64 MiB a block is a typo, not a request.
  if (bytes < 512 || bytes > (64U << 20) || bytes % 512 != 0) {
    throw std::invalid_argument("--bs " + std::to_string(bytes) +
                                ": expected 512 bytes to 64m, a multiple of 512 (e.g. 4k, 1m)");
  }
  return static_cast<std::uint32_t>(bytes);
}

std::uint32_t checkNumjobs(std::int64_t numjobs) {
  if (numjobs < 1 || numjobs > 256) throw std::invalid_argument("--numjobs must be 1..256");
  return static_cast<std::uint32_t>(numjobs);
}

std::vector<FileProfile> checkProfiles(const std::string& list) {
  std::vector<FileProfile> profiles;
  std::istringstream names(list);
  std::string name;
  while (std::getline(names, name, ',')) {
    if (name.empty()) continue;
    try {
      profiles.push_back(profileByName(name));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("--profiles: ") + e.what());
    }
  }
  if (profiles.empty()) profiles = fileProfiles();
  return profiles;
}

void addWorkloadOptions(po::options_description& opts, WorkloadArgs& a) {
  addSizeOption(opts, a.size);
  addRuntimeOption(opts, a.runtime);
  opts.add_options()("io-bytes", po::value(&a.ioBytes),
                     "bytes per job to transfer instead of a runtime (e.g. 1g)");
  addIodepthOption(opts, a.iodepth);
  addNumjobsOption(opts, a.numjobs);
  opts.add_options()(
      "client", po::value(&a.client)->default_value(a.client),
      "nfs engine: per-job = each job its own client and session; shared = the jobs share one "
      "client (one session, a connection per job unless the URL gives nconnect=), as an "
      "application's threads share one mount");
  addRampOption(opts, a.ramp);
  opts.add_options()("direct", po::value(&a.direct)->default_value(a.direct),
                     "path engine: 1 = O_DIRECT, 0 = buffered")(
      "nrfiles", po::value(&a.nrfiles)->default_value(a.nrfiles), "files per job")(
      "seed", po::value(&a.seed)->default_value(a.seed),
      "seed of offsets and data pattern (same seed, same run)")(
      "rwmixread", po::value(&a.rwmixread)->default_value(-1),
      "percent reads of the randrw profile (-1: 80); an error with any other profile");
  addVerifyOption(opts, a.verify);
  opts.add_options()(
      "shared-file", po::bool_switch(&a.sharedFile),
      "every job (of every rank) works on a disjoint range of one file set instead of its own "
      "files (IOR's shared file)")(
      "drop-server-cache", po::bool_switch(&a.dropServerCache),
      "drop the server's page cache before each read phase (server on this host)")(
      "work-dir", po::value(&a.workDir)->default_value(a.workDir),
      "parent of the embedded server's export directory (a disk, not tmpfs)")(
      "reads-per-compound", po::value(&a.readsPerCompound)->default_value(a.readsPerCompound),
      "embedded server, nfs engine over TCP: up to N queued READs of one file share a COMPOUND "
      "(compare: an extra nfs-tcp-vN column); other targets take it as the URL key "
      "reads-per-compound=N")(
      "allow-destructive-write", po::value(&a.allowDestructiveWrite)->composing(),
      "DEVICE, repeatable: a dev: target on this device may be written (its data is destroyed); "
      "refused while it is mounted, swap, held or carries a signature")(
      "force", po::bool_switch(&a.force),
      "with --allow-destructive-write: write a device that carries a file system or partition "
      "table signature or has holders (never a mounted one)")(
      "sample-interval", po::value(&a.sampleIntervalMs)->default_value(a.sampleIntervalMs),
      "MS between readings of the counters that say what bounded a cell (client, RDMA ports, "
      "netdevs, CPU, nfsd); 0: no counters and no verdict");
}

namespace {

// The file-set and data settings: --io-bytes, --direct, --seed, --rwmixread.
void takeDataOptions(const WorkloadArgs& a, FileOptions& o) {
  if (!a.ioBytes.empty()) {
    o.ioBytes = parseSize(a.ioBytes, "--io-bytes");
    // 0 is how FileOptions says time-based: a given 0 must not turn into a 2 s run.
    if (o.ioBytes == 0) {
      throw std::invalid_argument(
          "--io-bytes '" + a.ioBytes +
          "': must be at least one block per job; leave it out for a time-based run (--runtime)");
    }
  }
  if (a.direct != 0 && a.direct != 1) throw std::invalid_argument("--direct must be 0 or 1");
  o.direct = a.direct != 0;
  o.nrfiles = a.nrfiles;
  if (a.seed < 0) {
    throw std::invalid_argument("--seed " + std::to_string(a.seed) + ": must be 0.." +
                                std::to_string(std::numeric_limits<std::int64_t>::max()));
  }
  o.seed = static_cast<std::uint64_t>(a.seed);
  if (a.rwmixread >= 0) {
    if (a.rwmixread > 100) throw std::invalid_argument("--rwmixread must be 0..100");
    o.rwmixread = static_cast<unsigned>(a.rwmixread);
  }
  o.verify = a.verify;
}

}  // namespace

FileOptions toFileOptions(const WorkloadArgs& a) {
  FileOptions o;
  o.sizeGiven = !a.size.empty();
  o.sizeBytes = o.sizeGiven ? checkSize(a.size) : 64ULL << 20;
  o.runtime = checkRuntime(a.runtime);
  o.ramp = checkRamp(a.ramp);
  o.iodepth = checkIodepth(a.iodepth);
  if (!a.bs.empty()) o.blockSize = checkBlockSize(parseSize(a.bs, "--bs"));
  o.numjobs = checkNumjobs(a.numjobs);
  takeDataOptions(a, o);
  o.sharedFile = a.sharedFile;
  o.sharingJobs = o.numjobs;
  if (a.client != "per-job" && a.client != "shared") {
    throw std::invalid_argument("--client '" + a.client + "': expected per-job or shared");
  }
  o.sharedClient = a.client == "shared";
  o.dropServerCache = a.dropServerCache;
  o.destructiveWrites = a.allowDestructiveWrite;
  o.force = a.force;
  if (o.force && o.destructiveWrites.empty()) {
    throw std::invalid_argument(
        "--force: only with --allow-destructive-write DEVICE (it overrides that option's checks)");
  }
  if (a.readsPerCompound == 0 || a.readsPerCompound > 16) {
    throw std::invalid_argument("--reads-per-compound must be 1..16");
  }
  if (a.sampleIntervalMs != 0 && (a.sampleIntervalMs < 50 || a.sampleIntervalMs > 10000)) {
    throw std::invalid_argument("--sample-interval " + std::to_string(a.sampleIntervalMs) +
                                ": must be 0 (off) or 50..10000 ms");
  }
  o.sampleInterval = std::chrono::milliseconds(a.sampleIntervalMs);
  return o;
}

}  // namespace nfsrdma::bench
