// A cell's jobs on their threads, for runFileBenchmark (FileRun.cpp), and
// with RankHooks this client's part in a many-client run: start with the
// others, sample the progress, stop with them.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bench/file/FileRun.h"

namespace nfsrdma::bench::filerun {

// --client shared on our client: the cell's jobs issue on one client.
bool sharesClient(const TargetSpec& target, const FileOptions& o);

// The jobs of one cell, each on its own thread: set up, wait at the gate so
// every clock starts together, run, make durable, close.
class CellJobs {
 public:
  CellJobs(const TargetSpec& target, const FileProfile& profile, const FileOptions& options,
           const RunSettings& settings, const RunResult& result, std::uint64_t generation)
      : target_(target),
        profile_(profile),
        options_(options),
        settings_(settings),
        iodepth_(result.iodepth),
        readPercent_(result.readPercent),
        generation_(generation),
        bytes_(fileBytes(options, profile.blockSize)),
        effectiveIodepth_(result.iodepth),
        jobs_(options.numjobs),
        commit_(options.numjobs, 0),
        outages_(options.numjobs),
        connections_(options.numjobs),
        drivers_(options.numjobs) {}

  void runAll();

  // Fills the result's timeline from the jobs' windows and the samples.
  void finishTimeline(RunResult& result) const;

  std::uint32_t effectiveIodepth() const { return effectiveIodepth_; }
  std::vector<JobResult>& jobs() { return jobs_; }
  const std::vector<double>& commitSeconds() const { return commit_; }
  // The jobs' outages; a shared client's once, closed first (every job is done).
  std::vector<OutageAccount> outages();
  // How the jobs reached the server (after outages()); nfs targets only.
  ClientUse clientUse() const;
  // Our client's counters now, summed over the cell's open clients: the
  // sampler's "client" source, from its thread. Nothing while none is open.
  std::optional<ClientLive> live() const;

 private:
  // The driver lives in drivers_, so that it outlives the engine (whose
  // requests, an io_uring's or the client's registrations, use its buffers)
  // and a stop request cannot meet a driver that is gone.
  struct Job {
    JobDriver* driver = nullptr;
    std::unique_ptr<Engine> engine;
  };

  JobSpec specOf(std::uint32_t j) const;

  // The cell's shared client, connected by the first job to need it (its
  // error is every job's: they all fail their set-up alike).
  std::shared_ptr<EngineShare> share();

  void setUp(Job& job, std::uint32_t j);

  void runJob(std::uint32_t j);

  void failSetUp(const std::string& why);

  class JobEnd;

  // This client's part: start with the others, sample the progress, stop
  // when the hooks say so. False: the cell was abandoned.
  bool coordinate(RankHooks& hooks);

  std::string setUpFailure();

  // Until every job is done: a progress sample every kSampleInterval, and
  // the hooks asked every pollInterval whether to stop. Bounded by the
  // jobs' own bounds (runtime or io bytes, then their hard stop).
  void watchRun(RankHooks& hooks);

  void sample(const RankHooks& hooks, BenchClock::time_point now);

  void stopDrivers();

  // The job's own client's connections, while it is open.
  void recordConnections(const Engine& engine, std::uint32_t j);

  void finishJob(Engine& engine, std::uint32_t j);

  // A job's own client is read by live() from setUp until just before it
  // is finished or dropped; a shared one until outages() closes it.
  void watch(const Engine* engine, bool on);
  class Unwatch;

  const TargetSpec& target_;
  const FileProfile& profile_;
  const FileOptions& options_;
  const RunSettings& settings_;
  const std::uint32_t iodepth_;
  const unsigned readPercent_;
  const std::uint64_t generation_;
  const std::uint64_t bytes_;
  JobProgress progress_;
  // Long enough for connects (30 s) and OPENs held by a grace period (the client retries them 120
  // s).
  StartGate gate_{options_.numjobs, std::chrono::seconds(180), settings_.rank != nullptr};
  std::mutex effectiveMu_;
  std::uint32_t effectiveIodepth_;  // under effectiveMu_ while the jobs set up
  std::vector<JobResult> jobs_;
  std::vector<double> commit_;
  std::vector<OutageAccount> outages_;
  std::vector<std::vector<ConnectionUse>> connections_;  // by job: its own client's
  // With RankHooks: the jobs' progress as the coordinator sees it.
  std::mutex runMu_;
  std::condition_variable runCv_;
  std::uint32_t issuingDone_ = 0;             // under runMu_
  std::uint32_t finished_ = 0;                // under runMu_
  std::string setUpError_;                    // under runMu_: the first job's set-up error
  std::vector<RankTimeline::Point> samples_;  // the coordinator's only
  std::mutex driversMu_;
  std::vector<std::unique_ptr<JobDriver>> drivers_;  // by job; under driversMu_
  // --client shared: the one client every job issues on. After drivers_,
  // so that it goes first: closing it ends its requests before the jobs'
  // buffers go (an error or interrupt path that never reached outages()).
  const bool shared_ = sharesClient(target_, options_);
  std::mutex shareMu_;
  std::shared_ptr<EngineShare> share_;  // under shareMu_ until the jobs are set up
  std::string shareError_;              // under shareMu_
  std::vector<ConnectionUse> shareConnections_;
  mutable std::mutex liveMu_;
  std::vector<const Engine*> watched_;         // under liveMu_
  const EngineShare* watchedShare_ = nullptr;  // under liveMu_
};

}  // namespace nfsrdma::bench::filerun
