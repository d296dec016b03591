// The side-by-side report of `nfsrdma-bench compare`: one model (targets,
// rows of profile and direction, one cell per row and target, ratio columns,
// limits, flags, baseline changes) rendered as the text table engineers
// build by hand (host disk, NFS over RDMA, NFS over TCP), as JSON (which
// reads back into the same model, so a saved run can be re-rendered or used
// as a baseline) and as HTML
// (HtmlReport.h). Running the matrix is CompareCommand.cpp's job; everything
// here is pure, so unit tests build reports from numbers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/bound/Bound.h"
#include "bench/compare/CacheFlags.h"
#include "bench/job/FileProfile.h"
#include "bench/ranks/RankReport.h"
#include "bench/report/Json.h"
#include "counters/Series.h"

namespace nfsrdma::bench {

struct CompareTarget {
  std::string name;         // column name: "local", "nfs-tcp", "libnfs", "nfs-rdma"
  std::string engine;       // "path", "nfs", "libnfs"
  std::string description;  // where and how
  bool available = true;
  std::string
      unavailable;  // why not, shown in the column: "no RDMA device — see nfsrdma-server doctor"
  bool overNetwork = true;  // false: the backing disk itself
  std::optional<double> linkBytesPerSecond;
  std::string linkSource;
  std::string nfsProto;                // nfs engine: "tcp" or "rdma"
  std::uint32_t readsPerCompound = 1;  // nfs engine: queued READs per COMPOUND
};

struct CompareCell {
  std::string profile;
  IoDirection direction = IoDirection::Read;
  std::string target;
  bool ran = false;
  double mibPerSecond = 0;
  double mbPerSecond = 0;
  double iops = 0;
  std::uint64_t ops = 0;
  std::uint64_t bytes = 0;
  double seconds = 0;  // the measured window
  // Writes: the COMMIT/fsync after the window that made them durable. The
  // write figures (MiB/s, IOPS) count it: bytes / (seconds + commitSeconds).
  double commitSeconds = 0;
  // False for a cell read from a JSON written before write figures counted
  // the commit (no commit_s): a baseline must not compare across that.
  bool commitCounted = true;
  std::vector<std::pair<std::string, double>>
      latUs;  // min, mean, max, p50 ... p99.99 in microseconds
  std::uint32_t blockSize = 0;
  std::uint32_t iodepth = 0;
  // Requests on the wire per job when the server granted fewer session
  // slots than iodepth needs; 0: not recorded (as iodepth).
  std::uint32_t effectiveIodepth = 0;
  std::uint32_t numjobs = 0;
  // nfs: "per-job" or "shared" (--client); empty: another engine, or a
  // report written before it was recorded.
  std::string clientMode;
  // Percent of the cell's requests that read (randrw's --rwmixread); nullopt
  // in reports written before it was recorded.
  std::optional<unsigned> readPercent;
  double workingSetBytes = 0;
  bool verified = false;
  std::uint64_t verifyMismatches = 0;
  // Seconds the run was without service (a lost connection, a server
  // restart it rode through); such a cell is never compared with a baseline.
  double outageSeconds = 0;
  bool crossedOutage = false;
  std::uint64_t errors = 0;
  std::string firstError;
  bool cacheDropped = false;
  std::string serverCache;  // the server's page cache when a read cell began: "warm", "dropped",
                            // "unmanaged"
  std::string unsupported;  // the engine cannot run this (shown as n/a, reason in the notes)
  std::vector<Flag> flags;
  // A many-client cell (MPI): the clients' breakdown; the figures above
  // are all clients' together (read back from a /3 JSON too). Null otherwise.
  std::shared_ptr<const RanksReport> clients;
  // The counters sampled while it ran (this run's cells only: a saved
  // JSON's cells have none), for the report's time series.
  std::shared_ptr<const counters::CellSeries> series;
  // What bounded it: judged from those counters and, after computeFlags,
  // its flags (disk, link, server cache). Sampled cells only.
  CellFacts facts;
  std::optional<Verdict> bound;
  // Against a baseline:
  std::optional<double> baselineMibPerSecond;
  std::optional<double> baselineIops;
  double changePercent = 0;  // MiB/s, (now - before) / before
  bool regression = false;
  // Not compared because the conditions differ: "iodepth 128 -> 1, numjobs 1 -> 128".
  std::string baselineConfigChange;

  double lat(const std::string& key) const;
};

struct CompareRatio {
  std::string numerator;  // target names
  std::string denominator;
  std::string name() const { return numerator + "/" + denominator; }
};

struct CompareReport {
  std::vector<std::pair<std::string, std::string>> config;  // banner: name, value
  std::vector<CompareTarget> targets;
  std::vector<std::pair<std::string, IoDirection>> rows;  // in report order
  std::vector<CompareCell> cells;
  std::vector<CompareRatio> ratios;
  std::string diskTarget;  // whose figures bound the others ("local")
  std::optional<double> serverMemoryBytes;
  std::string serverMemorySource;
  std::vector<std::string> notes;  // closing notes
  std::string baselinePath;        // empty: no baseline
  double regressionThresholdPercent = 10;

  const CompareCell* cell(const std::string& profile, IoDirection d,
                          const std::string& target) const;
  CompareCell* cell(const std::string& profile, IoDirection d, const std::string& target);
  const CompareTarget* target(const std::string& name) const;
  // numerator/denominator of MiB/s for a row; nullopt when either did not run.
  std::optional<double> ratio(const CompareRatio& r, const std::string& profile,
                              IoDirection d) const;
  std::size_t regressions() const;
  std::size_t warnings() const;
};

// Ratio columns for the targets present, in this order when both sides
// exist: nfs-rdma/nfs-tcp, nfs-tcp/libnfs, nfs-tcp/local, nfs-rdma/local,
// nfs-rdma/nvmf-rdma, nfs-rdma/iser, nvmf-rdma/nvme-tcp, iser/iscsi, nvmf-rdma/local.
std::vector<CompareRatio> defaultRatios(const std::vector<CompareTarget>& targets);
// --ratios "a/b,c/d": the ratio columns, in that order. Throws
// std::invalid_argument naming an item that is not NUM/DEN of target names.
std::vector<CompareRatio> parseRatios(const std::string& list,
                                      const std::vector<CompareTarget>& targets);

// Fills every cell's flags from the disk target's figures, the targets'
// links and the server's memory.
void computeFlags(CompareReport& report);

// The table (rows = profile and direction, columns = targets in MiB/s and
// IOPS, then ratios; with a baseline a change column per target), then the
// numbered flags, regressions and notes.
std::string formatCompareText(const CompareReport& report);

// Pieces the text and the HTML report share, so both say the same:
// a row's name, with the mix of a mixed profile: "randrw(70/30)";
std::string rowName(const CompareReport& report, const std::string& profile);
// what a cell that did not run shows ("error", "n/a", "-");
std::string notRunText(const CompareCell* c);
// the mark of a cell whose read-back found other data than written;
inline constexpr const char* kBadDataMark = "BAD-DATA";
// the baseline column of a cell that ran: "+1.5%", "-20.0%!" (a regression),
// "new", or "config changed (iodepth 128 -> 1)";
std::string baselineChangeText(const CompareCell& c);
// the Errors section: "nfs-rdma 4m-read: READ: NFS4ERR_IO", "nfs-tcp
// 4k-randread read: 7 verify mismatches";
std::vector<std::string> errorLines(const CompareReport& r);
// the Bounds reached section (info flags): "nfs-rdma <message>".
std::vector<std::string> boundsReachedLines(const CompareReport& r);
// Each sampled cell's verdict: "TARGET PROFILE DIR: bound: TAG" and its
// lines under it.
std::vector<std::string> boundLines(const CompareReport& r);
// the commit section: "nfs-tcp 4m-write: 1.023 s of writes + 192 ms COMMIT/fsync",
// under kCommitHeading.
inline constexpr const char* kCommitHeading =
    "Writes count the COMMIT/fsync that made them durable (like fio's end_fsync=1): MiB/s and IOPS "
    "= "
    "bytes / (window + commit)";
std::vector<std::string> commitLines(const CompareReport& r);
// the n/a section, once per target and reason: "libnfs: libnfs 4.0.0 cannot ...".
std::vector<std::string> unsupportedLines(const CompareReport& r);

// JSON document "nfsrdma-bench-compare/3" (/3 adds a many-client cell's "clients"; /2 and /1 still
// read) and back. parseCompareJson throws std::runtime_error naming what is missing.
std::string compareToJson(const CompareReport& report);
CompareReport compareFromJson(const JsonValue& doc);

// Marks each cell's change against the same cell of `before` and flags
// drops beyond the threshold (percent of MiB/s). Only cells measured under
// the same conditions are compared: block size, iodepth (asked for and
// effective), numjobs, read/write mix, verify and working set of the cell,
// runtime (or io bytes), ramp and direct of the run, and the target (its
// engine and transport; its description unless the server was the
// embedded one, whose port and directory change every run), and neither
// run crossed an outage; otherwise the cell says what changed
// (baselineConfigChange) instead.
void applyBaseline(CompareReport& report, const CompareReport& before, const std::string& path,
                   double thresholdPercent);

// Link bandwidth from `nfsrdma-bench link --json` output (single, --tcp or
// --both): bytes/s of the largest message's average, per transport;
// nullopt for a transport the file does not hold.
struct LinkFigures {
  std::optional<double> rdmaBytesPerSecond;
  std::optional<double> tcpBytesPerSecond;
};
LinkFigures linkFiguresFromJson(const JsonValue& doc);

}  // namespace nfsrdma::bench
