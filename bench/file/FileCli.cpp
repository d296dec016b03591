#include "bench/file/FileCli.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "util/ErrnoText.h"
#include "util/ToolCli.h"

namespace po = boost::program_options;

namespace nfsrdma::bench {

void addWorkloadOptions(po::options_description& opts, WorkloadArgs& a) {
  std::ostringstream ramp;  // "0.3" in --help, not boost's 0.29999999999999999
  ramp << a.ramp;
  opts.add_options()("size", po::value(&a.size),
                     "bytes per job (k/m/g/t, binary), split across --nrfiles files (default 64m; "
                     "a dev: target: the device split across the jobs)")(
      "runtime", po::value(&a.runtime)->default_value(a.runtime),
      "seconds per run, time-based (after the ramp)")(
      "io-bytes", po::value(&a.ioBytes),
      "bytes per job to transfer instead of a runtime (e.g. 1g)")(
      "iodepth", po::value(&a.iodepth)->default_value(0),
      "requests in flight per job (0: the profile's: 32 for 4k, 8 for 128k, 2 for 4m)")(
      "numjobs", po::value(&a.numjobs)->default_value(a.numjobs),
      "jobs: threads, each with its own files and (--client per-job) its own "
      "connection/context/ring")(
      "client", po::value(&a.client)->default_value(a.client),
      "nfs engine: per-job = each job its own client and session; shared = the jobs share one "
      "client (one session, a connection per job unless the URL gives nconnect=), as an "
      "application's threads share one mount")(
      "ramp", po::value(&a.ramp)->default_value(a.ramp, ramp.str()),
      "seconds run before measuring")("direct", po::value(&a.direct)->default_value(a.direct),
                                      "path engine: 1 = O_DIRECT, 0 = buffered")(
      "nrfiles", po::value(&a.nrfiles)->default_value(a.nrfiles), "files per job")(
      "seed", po::value(&a.seed)->default_value(a.seed),
      "seed of offsets and data pattern (same seed, same run)")(
      "rwmixread", po::value(&a.rwmixread)->default_value(-1),
      "percent reads of the randrw profile (-1: 80); an error with any other profile")(
      "verify", po::bool_switch(&a.verify),
      "check every byte read; read back and check everything written")(
      "shared-file", po::bool_switch(&a.sharedFile),
      "every job (of every MPI rank or pod) works on a disjoint range of one file set instead "
      "of its own files (IOR's shared file)")(
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
      "table signature or has holders (never a mounted one)");
}

FileOptions toFileOptions(const WorkloadArgs& a) {
  FileOptions o;
  o.sizeGiven = !a.size.empty();
  o.sizeBytes = o.sizeGiven ? parseSize(a.size, "--size") : 64ULL << 20;
  if (o.sizeBytes == 0)
    throw std::invalid_argument("--size '" + a.size + "': must be more than 0 bytes per job");
  if (!(a.runtime > 0) || a.runtime > 86400)
    throw std::invalid_argument("--runtime must be in (0, 86400] seconds");
  if (!(a.ramp >= 0) || a.ramp > 3600)
    throw std::invalid_argument("--ramp must be in [0, 3600] seconds");
  o.runtime = std::chrono::milliseconds(std::llround(a.runtime * 1000));
  o.ramp = std::chrono::milliseconds(std::llround(a.ramp * 1000));
  if (!a.ioBytes.empty()) {
    o.ioBytes = parseSize(a.ioBytes, "--io-bytes");
    // 0 is how FileOptions says time-based: a given 0 must not turn into a 2 s run.
    if (o.ioBytes == 0) {
      throw std::invalid_argument(
          "--io-bytes '" + a.ioBytes +
          "': must be at least one block per job; leave it out for a time-based run (--runtime)");
    }
  }
  o.iodepth = a.iodepth;
  o.numjobs = a.numjobs;
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
  o.sharedFile = a.sharedFile;
  o.sharingJobs = a.numjobs;
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
  return o;
}

void storeOptions(int argc, char** argv, const po::options_description& opts, po::variables_map& vm,
                  const char* serverOption) {
  // Boost drops a word that is no option when no positional options are
  // declared: `file nfs://host/export` would benchmark the embedded server.
  po::options_description all;
  all.add(opts);
  all.add_options()("nfsrdma-stray-argument", po::value<std::vector<std::string>>());
  po::positional_options_description stray;
  stray.add("nfsrdma-stray-argument", -1);
  tool::parseOrUsageError([&] {
    po::store(po::command_line_parser(argc, argv).options(all).positional(stray).run(), vm);
  });
  if (vm.count("nfsrdma-stray-argument") != 0) {
    const std::string word = vm["nfsrdma-stray-argument"].as<std::vector<std::string>>().front();
    std::string message =
        "unexpected argument '" + word + "': every setting is an option (see --help)";
    if (word.find("://") != std::string::npos || word.find('/') != std::string::npos) {
      message += std::string("; a server or directory is given with ") + serverOption;
    }
    throw tool::UsageError(message);
  }
  tool::parseOrUsageError([&] { po::notify(vm); });
}

bool parseOptionsOrHelp(int argc, char** argv, const po::options_description& opts,
                        const char* command, const char* serverOption) {
  po::variables_map vm;
  storeOptions(argc, argv, opts, vm, serverOption);
  if (vm.count("help") == 0) return false;
  std::cout << "usage: nfsrdma-bench " << command << " [options]\n" << opts;
  return true;
}

void checkOutputPath(const std::string& path, const char* option) {
  if (path.empty() || path == "-") return;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::string dir = parent.empty() ? "." : parent.string();
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw std::invalid_argument(std::string(option) + " " + path + ": directory " + dir +
                                " does not exist");
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    throw std::invalid_argument(std::string(option) + " " + path + ": cannot write in " + dir +
                                ": " + util::errnoText(errno));
  }
}

bool progressWanted() {
  return ::isatty(STDERR_FILENO) == 1;
}

}  // namespace nfsrdma::bench
