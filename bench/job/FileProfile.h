// Workload description of the file benchmark: the named profiles users
// compare (4K random, 128K and 4M sequential, read and write, and a random
// read/write mix as the iSCSI-vs-NFS comparisons use), the options that
// shape a run (fio's vocabulary: size, runtime or io bytes, iodepth, numjobs,
// ramp, direct, nrfiles, seed) and the helpers that parse them. Pure data:
// nothing here does I/O but validateOptions' read of /proc/meminfo.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nfsrdma::bench {

enum class IoDirection { Read, Write };
const char* directionName(IoDirection d);  // "read" / "write"

struct FileProfile {
  std::string name;  // "4k-randread"
  std::uint32_t blockSize = 4096;
  bool random = true;
  unsigned readPercent = 100;  // 100: reads only, 0: writes only, else a mix
  std::uint32_t defaultIodepth = 32;
  std::string summary;  // one line for --help

  bool reads() const { return readPercent > 0; }
  bool writes() const { return readPercent < 100; }
  bool mixed() const { return reads() && writes(); }
  // --rwmixread sets the mix of plain randrw only: the pure profiles stay
  // pure, and randrw:N keeps the mix its name says.
  bool takesRwmixread() const { return name == "randrw"; }
};

// The built-in profiles, in report order.
const std::vector<FileProfile>& fileProfiles();
// A profile by name; "randrw" takes an optional mix, "randrw:70" = 70% reads.
// Throws std::invalid_argument listing the known names.
FileProfile profileByName(std::string_view name);

struct FileOptions {
  std::uint64_t sizeBytes = 64ULL << 20;  // per job, split across nrfiles files
  // --size was given; else a dev: target's jobs split the whole device.
  bool sizeGiven = false;
  std::chrono::milliseconds runtime{2000};  // time-based when ioBytes == 0
  std::uint64_t ioBytes = 0;                // per job, counted after the ramp; 0: time-based
  std::uint32_t iodepth = 0;                // 0: the profile's default
  std::uint32_t blockSize = 0;              // --bs; 0: the profile's
  std::uint32_t numjobs = 1;
  std::chrono::milliseconds ramp{300};
  bool direct = true;  // path engine: O_DIRECT
  std::uint32_t nrfiles = 1;
  std::uint64_t seed = 1;
  bool verify = false;
  bool dropServerCache = false;
  std::optional<unsigned> rwmixread;  // the mix of randrw (FileProfile::takesRwmixread)
  // This process's first job number. Client r of a many-client run (an MPI
  // rank, a pod) runs jobs r x numjobs onwards, so that its files, pattern
  // file ids and random streams are its own (IOR's file per process) and
  // the clients together lay out one file set, as one process with all
  // their jobs would.
  std::uint32_t jobBase = 0;
  // --shared-file (IOR's -F off): every job of every client works on a
  // disjoint range of one file set instead of its own files; sharingJobs
  // says how many jobs share it (all clients' numjobs together), so that
  // job g's range starts at g x the per-file size.
  bool sharedFile = false;
  std::uint32_t sharingJobs = 0;
  // --client shared: a cell's jobs share one client of our nfs engine (one
  // session, a connection per job) as an application's threads share one
  // mount; false (per-job): each job has its own client and session.
  bool sharedClient = false;
  // dev: targets the run may write (--allow-destructive-write, each the
  // device as given) and --force (see writeRefusal).
  std::vector<std::string> destructiveWrites;
  bool force = false;
  // --sample-interval: how often a cell's counters are read while it runs
  // (bench/file/CellCounters.h); 0: not at all (no counters, no verdict).
  std::chrono::milliseconds sampleInterval{250};

  // Bytes of the whole file set (every job's files): the working set.
  // validateOptions keeps it below kMaxWorkingSetBytes, so it cannot overflow.
  std::uint64_t workingSetBytes() const { return sizeBytes * numjobs; }
};

// The largest file set (--size x --numjobs) laid out: above it a typo, not a
// benchmark, is the likely cause, and the layout writes every byte.
inline constexpr std::uint64_t kMaxWorkingSetBytes = 16ULL << 40;

// "64m", "1g", "4096", "10GiB", "1.5 GiB" -> bytes (binary multiples). The
// whole text must be one number and an optional unit. Throws
// std::invalid_argument naming option ("--io-bytes") and the expected form.
std::uint64_t parseSize(std::string_view text, std::string_view option = "size");
// "512 MiB", "12.5 GiB", "4 KiB"
std::string formatBytes(double bytes);
// Bytes of each of a job's files for these options and block size: the
// per-job size split across nrfiles, rounded down to whole blocks.
std::uint64_t fileBytes(const FileOptions& o, std::uint32_t blockSize);
// Name of file f of job j of a file set with this seed and per-file size.
// Every profile and target with the same seed and size shares the set.
std::string benchFileName(const FileOptions& o, std::uint32_t job, std::uint32_t file);
// Where job j's range starts in each of its files: 0 with a file set per
// job, its share of the shared set with --shared-file.
std::uint64_t sharedRangeOffset(const FileOptions& o, std::uint32_t job);
// Checks the options against the profile, the buffer memory against this
// host's MemAvailable included; throws std::invalid_argument naming the option.
void validateOptions(const FileOptions& o, const FileProfile& p);
// Bytes of I/O buffers the jobs allocate: numjobs x iodepth x block size,
// twice that for a mix without --verify (its writes keep their own buffers).
std::uint64_t bufferBytes(const FileOptions& o, const FileProfile& p);
// Refuses buffers above 3/4 of memAvailable (the page cache, the client and
// a server on this host need the rest); nullopt: unknown, not checked.
void validateBufferMemory(const FileOptions& o, const FileProfile& p,
                          std::optional<std::uint64_t> memAvailable);
// MemAvailable of /proc/meminfo in bytes; nullopt when unreadable.
std::optional<std::uint64_t> memAvailableBytes();
// The bytes a job of this profile issues with --io-bytes: the amount
// rounded down to whole blocks, as fio does; 0 for a time-based run.
std::uint64_t ioBytesPerJob(const FileOptions& o, std::uint32_t blockSize);
// Percent of a job's requests that read: --rwmixread for randrw, else the profile's.
unsigned readPercentOf(const FileProfile& p, const FileOptions& o);
// The profile as it runs: randrw with --rwmixread's mix, so that every
// decision (rows, read-back, cache preparation, engines that cannot write)
// follows the mix the jobs use; and --bs's block size, the name's size
// following it ("4m-read" with --bs 1m runs as "1m-read"; "randrw" as
// "randrw-1m"). Applying it twice changes nothing more.
FileProfile profileAsRun(FileProfile p, const FileOptions& o);
// fio's way of writing a block size in a name: "4k", "1m", "1536" (bytes
// that are no whole KiB).
std::string blockSizeLabel(std::uint32_t bytes);
// --rwmixread needs a profile it applies to (plain randrw) among the ones
// run: `file --profile 4k-randwrite --rwmixread 70` would otherwise run
// pure writes while the user asked for a mix. Throws std::invalid_argument
// naming the option, the profiles and what is expected.
void validateRwmixread(const FileOptions& o, const std::vector<FileProfile>& profiles);

}  // namespace nfsrdma::bench
