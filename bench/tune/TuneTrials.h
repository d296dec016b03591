// The trials of `tune`: each a whole run of the file benchmark on the
// target with one setting, our client's URL keys or the kernel client's
// mount options (mounted for that trial alone). Alone, or on every rank of
// an MPI launch: rank 0 runs the search and tells the others each trial's
// target, every rank runs it with its own jobs and files, and the trial's
// figure is their aggregate (IOR's window over all ranks). So under mpirun
// the objective is the cluster's, the client's knobs apply to every rank,
// and the server's are changed once, by rank 0.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/file/FileClients.h"
#include "bench/file/FileEmbedded.h"
#include "bench/file/FileRun.h"
#include "bench/tune/KernelTarget.h"
#include "bench/tune/ServerKnobs.h"
#include "bench/tune/TuneBudget.h"
#include "bench/tune/TuneObjective.h"
#include "bench/tune/TuneReport.h"

namespace nfsrdma::bench {

struct TunePlan {
  FileOptions options;
  FileProfile profile;
  Objective objective = Objective::Iops;
  TuneBudget budget{std::nullopt, 0};
};

// The start point's target: --target (nfs: or knfs:), or the embedded server's.
struct TuneTarget {
  std::unique_ptr<EmbeddedServer> embedded;
  TargetSpec spec;                     // nfs: the start's; knfs: unused
  std::string startSpec;               // "nfs:URL" or the knfs: target, as the start runs it
  std::optional<KernelTarget> kernel;  // knfs:
  std::filesystem::path mountDir;      // knfs: where each trial mounts (removed at the end)
  bool rdma = false;                   // the trials go over RDMA
  ServerStart serverStart;             // the server's knobs now, when it is reachable
  TuneTarget() = default;
  TuneTarget(TuneTarget&&) = default;
  TuneTarget& operator=(TuneTarget&&) = default;
  ~TuneTarget();
};

// This process's directory for its trial mounts: in workDir, by pid.
std::filesystem::path trialMountDir(const std::string& workDir);

ClientWorkload workloadOf(const FileProfile& p, const FileOptions& o);

// Runs the trials of a search on the target, printing a line as each ends
// (rank 0, or alone).
class TrialRunner {
 public:
  TrialRunner(const TuneRun& run, const TuneTarget& target, const TunePlan& plan,
              TuneBudget& budget, CreatedFiles& created, bool quiet, ServerSession* server,
              ClientRun& clients);

  // The file set laid out and, for reads, read once into the server's
  // cache: not a trial (the first trial would otherwise pay for it).
  void warmUp();
  TrialFigure operator()(const Setting& s);
  std::vector<TrialRun> take() { return std::move(trials_); }
  // A run outside the search (--versus): a setting of the target's whole
  // space. Its figure, or the error that ended it, thrown.
  double outside(const KnobSpace& space, const Setting& s, const std::string& label);
  // Under MPI, tells the other ranks that the trials are over.
  void end();

 private:
  RunResult runSetting(const std::vector<Knob>& knobs, const Setting& s, const Setting& start,
                       bool warm, TrialRun& trial);
  TrialFigure runTrial(const std::vector<Knob>& knobs, const Setting& s, const Setting& start,
                       TrialRun& trial);
  RunSettings settings() const;

  const TuneRun& run_;
  const TuneTarget& target_;
  const TunePlan& plan_;
  TuneBudget& budget_;
  CreatedFiles& created_;
  bool quiet_;
  ServerSession* server_;  // null: the server's knobs are not in play
  ClientRun& clients_;
  std::uint32_t cells_ = 0;  // runs so far: every rank's cell number
  std::vector<TrialRun> trials_;
};

// A rank other than 0 under mpirun: runs each trial rank 0 announces, with
// its own jobs and files, until rank 0 says the trials are over (at most
// maxRuns of them). Throws std::runtime_error when rank 0 sends more.
int followTrials(ClientRun& clients, const TunePlan& plan, const std::string& workDir,
                 CreatedFiles& created, std::size_t maxRuns);

}  // namespace nfsrdma::bench
