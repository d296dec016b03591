// Command-line options shared by `nfsrdma-bench file` and `compare`: the
// workload knobs in fio's vocabulary, parsed into FileOptions.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "bench/job/FileProfile.h"

namespace nfsrdma::bench {

struct WorkloadArgs {
  std::string size;  // empty: 64m (a dev: target: the device split across the jobs)
  double runtime = 2;
  std::string ioBytes;
  std::uint32_t iodepth = 0;
  std::uint32_t numjobs = 1;
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
};

// Adds --size, --runtime, --io-bytes, --iodepth, --numjobs, --ramp, --direct,
// --nrfiles, --seed, --rwmixread, --verify, --shared-file, --client, --drop-server-cache,
// --work-dir,
// --reads-per-compound, --allow-destructive-write, --force.
void addWorkloadOptions(boost::program_options::options_description& opts, WorkloadArgs& a);
// Throws std::invalid_argument naming the option.
FileOptions toFileOptions(const WorkloadArgs& a);
// Parses argv (after the subcommand word) into vm. A word that is not an
// option is an error naming it (and serverOption, the option that takes a
// server, when it looks like a URL or path). Throws tool::UsageError for
// every word it cannot parse (Boost's errors, with Boost's text).
void storeOptions(int argc, char** argv, const boost::program_options::options_description& opts,
                  boost::program_options::variables_map& vm, const char* serverOption);
// storeOptions, then, when --help was given, prints "usage: nfsrdma-bench
// COMMAND [options]" and the options and returns true.
bool parseOptionsOrHelp(int argc, char** argv,
                        const boost::program_options::options_description& opts,
                        const char* command, const char* serverOption);
// Before a run: the directory an output file (--json, --html) goes to
// exists and is writable, so a long run does not end in "cannot write".
// "" and "-" (stdout) pass. Throws std::invalid_argument naming the option.
void checkOutputPath(const std::string& path, const char* option);
// True when stderr is a terminal: the live progress line is shown then only.
bool progressWanted();

}  // namespace nfsrdma::bench
