// CellJobs: a cell's jobs on their threads, and this client's part in a
// many-client run.
#include "bench/file/CellJobs.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <stdexcept>
#include <thread>

#include "bench/file/FileLayout.h"
#include "bench/file/ProgressLine.h"

namespace nfsrdma::bench::filerun {

bool sharesClient(const TargetSpec& target, const FileOptions& o) {
  return o.sharedClient && target.engine == EngineKind::Nfs;
}

// Counts a job out: issuingDone() once it stops issuing, the rest when
// its thread is done with the cell. The coordinator waits on both.
class CellJobs::JobEnd {
 public:
  explicit JobEnd(CellJobs& c) : c_(c) {}
  ~JobEnd() {
    issuingDone();
    std::lock_guard lock(c_.runMu_);
    ++c_.finished_;
    c_.runCv_.notify_all();
  }
  void issuingDone() const {
    if (counted_) return;
    counted_ = true;
    std::lock_guard lock(c_.runMu_);
    ++c_.issuingDone_;
    c_.runCv_.notify_all();
  }

 private:
  CellJobs& c_;
  mutable bool counted_ = false;
};

void CellJobs::runAll() {
  const double total = std::chrono::duration<double>(options_.ramp + options_.runtime).count();
  ProgressLine line(settings_, progress_, options_.ioBytes ? 0 : total);
  if (settings_.rank == nullptr) {
    onJobThreads(options_.numjobs, [&](std::uint32_t j) { runJob(j); });
    return;
  }
  // The jobs on their threads, this thread the client's part in the run:
  // every RankHooks call stays on the caller's thread (MPI's FUNNELED).
  std::exception_ptr jobsError;
  std::thread jobs([&] {
    try {
      onJobThreads(options_.numjobs, [&](std::uint32_t j) { runJob(j); });
    } catch (...) {
      jobsError = std::current_exception();
    }
  });
  bool started = false;
  try {
    started = coordinate(*settings_.rank);
  } catch (...) {
    // The hooks failed (MPI): the jobs end before the error goes on.
    gate_.fail();
    stopDrivers();
    jobs.join();
    throw;
  }
  jobs.join();
  if (jobsError) std::rethrow_exception(jobsError);
  if (!started) throw std::runtime_error(settings_.rank->abandonReason());
}

void CellJobs::finishTimeline(RunResult& result) const {
  if (settings_.rank == nullptr) return;
  RankTimeline& t = result.timeline;
  bool any = false;
  BenchClock::time_point from{}, to{};
  for (const auto& j : jobs_) {
    // A job whose engine failed before its clock started has no window.
    if (j.measuredFrom == BenchClock::time_point{}) continue;
    if (!any || j.measuredFrom < from) from = j.measuredFrom;
    if (!any || j.measuredTo > to) to = j.measuredTo;
    any = true;
  }
  if (!any) from = to = BenchClock::now();
  t.startNs = settings_.rank->clockNs(from);
  // A window of at least 1 ns: a client that measured nothing still has one.
  t.endNs = std::max(t.startNs + 1, settings_.rank->clockNs(to));
  for (const auto& p : samples_) {
    if (p.atNs > t.startNs && p.atNs < t.endNs) t.points.push_back(p);
  }
  const auto& d = result.dir;
  t.points.push_back({t.endNs, d[0].bytes + d[1].bytes, d[0].ops + d[1].ops});
}

std::vector<OutageAccount> CellJobs::outages() {
  std::vector<OutageAccount> all = outages_;
  {
    std::lock_guard lock(liveMu_);
    watchedShare_ = nullptr;
  }
  if (share_) {
    all.push_back(share_->outages());
    shareConnections_ = share_->connections();
    share_->close();
  }
  return all;
}

ClientUse CellJobs::clientUse() const {
  ClientUse u;
  if (target_.engine != EngineKind::Nfs) return u;
  u.mode = shared_ ? "shared" : "per-job";
  if (shared_) {
    u.sessions = 1;
    u.perConnection = shareConnections_;
  } else {
    // The jobs that got as far as a client (a failed set-up has none).
    for (const auto& c : connections_) {
      u.sessions += c.empty() ? 0U : 1U;
      u.perConnection.insert(u.perConnection.end(), c.begin(), c.end());
    }
  }
  u.connections = static_cast<std::uint32_t>(u.perConnection.size());
  return u;
}

JobSpec CellJobs::specOf(std::uint32_t j) const {
  JobSpec spec = jobSpecFor(profile_, options_, j, iodepth_, bytes_);
  spec.generation = generation_;
  return spec;
}

std::shared_ptr<EngineShare> CellJobs::share() {
  std::lock_guard lock(shareMu_);
  if (!share_ && shareError_.empty()) {
    try {
      share_ = makeEngineShare(target_, options_.numjobs);
      std::lock_guard watching(liveMu_);
      watchedShare_ = share_.get();
    } catch (const std::exception& e) {
      shareError_ = e.what();
    }
  }
  if (!share_) throw std::runtime_error(shareError_);
  return share_;
}

void CellJobs::setUp(Job& job, std::uint32_t j) {
  job.engine = shared_ ? makeEngine(target_, share()) : makeEngine(target_);
  watch(job.engine.get(), true);
  // A connect can take long (a server that does not answer): an
  // interrupt meanwhile opens nothing more.
  if (const int sig = interruptSignal()) throw Interrupted(sig);
  const JobSpec spec = specOf(j);
  job.engine->open(spec.files, false);
  {
    std::lock_guard lock(driversMu_);
    drivers_[j] = std::make_unique<JobDriver>(spec, &progress_);
    job.driver = drivers_[j].get();
  }
  const std::uint32_t e = job.engine->effectiveIodepth(iodepth_, profile_.blockSize, readPercent_);
  std::lock_guard lock(effectiveMu_);
  effectiveIodepth_ = std::min(effectiveIodepth_, e);
}

// Takes a job's engine off live()'s list when the job ends, before the
// engine goes (declared after it, so it runs first).
class CellJobs::Unwatch {
 public:
  Unwatch(CellJobs& cell, const Job& job) : cell_(cell), job_(job) {}
  ~Unwatch() { cell_.watch(job_.engine.get(), false); }
  Unwatch(const Unwatch&) = delete;
  Unwatch& operator=(const Unwatch&) = delete;

 private:
  CellJobs& cell_;
  const Job& job_;
};

void CellJobs::watch(const Engine* engine, bool on) {
  if (engine == nullptr) return;
  std::lock_guard lock(liveMu_);
  if (on) {
    watched_.push_back(engine);
  } else {
    watched_.erase(std::remove(watched_.begin(), watched_.end(), engine), watched_.end());
  }
}

std::optional<ClientLive> CellJobs::live() const {
  std::lock_guard lock(liveMu_);
  if (watched_.empty() && watchedShare_ == nullptr) return std::nullopt;
  ClientLive sum;
  bool any = watchedShare_ != nullptr;
  if (watchedShare_ != nullptr) sum += watchedShare_->live();
  for (const Engine* e : watched_) {
    if (const auto l = e->live()) {
      sum += *l;
      any = true;
    }
  }
  if (!any) return std::nullopt;
  return sum;
}

void CellJobs::runJob(std::uint32_t j) {
  const JobEnd end(*this);
  Job job;
  const Unwatch unwatch(*this, job);
  try {
    setUp(job, j);
  } catch (const std::exception& e) {
    failSetUp(e.what());
    throw;
  }
  // Every clock starts together: one job's window must not start while
  // others still connect.
  if (!gate_.arriveAndWait()) return;
  try {
    job.engine->run(*job.driver);
  } catch (const std::exception& e) {
    recordConnections(*job.engine, j);
    jobs_[j] = job.driver->result();
    ++jobs_[j].errors;
    if (jobs_[j].firstError.empty()) jobs_[j].firstError = e.what();
    return;
  }
  jobs_[j] = job.driver->result();
  end.issuingDone();
  finishJob(*job.engine, j);
}

void CellJobs::failSetUp(const std::string& why) {
  {
    std::lock_guard lock(runMu_);
    if (setUpError_.empty()) setUpError_ = why;
  }
  gate_.fail();
}

bool CellJobs::coordinate(RankHooks& hooks) {
  std::string failure;
  try {
    if (!gate_.awaitJobs()) failure = setUpFailure();
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (!hooks.startTogether(failure)) {
    gate_.fail();
    hooks.ended();
    return false;
  }
  gate_.open();
  watchRun(hooks);
  hooks.ended();
  return true;
}

std::string CellJobs::setUpFailure() {
  std::lock_guard lock(runMu_);
  if (!setUpError_.empty()) return setUpError_;
  return interruptSignal() != 0 ? "interrupted" : "a job's set-up failed";
}

void CellJobs::watchRun(RankHooks& hooks) {
  constexpr auto kSampleInterval = std::chrono::milliseconds(100);
  const auto poll = std::min<std::chrono::milliseconds>(hooks.pollInterval(), kSampleInterval);
  auto nextSample = BenchClock::now() + kSampleInterval;
  bool stopped = false;
  std::unique_lock lock(runMu_);
  while (finished_ < options_.numjobs) {
    runCv_.wait_for(lock, poll);
    const auto now = BenchClock::now();
    if (now >= nextSample) {
      sample(hooks, now);
      nextSample += kSampleInterval;
    }
    const bool done = issuingDone_ >= options_.numjobs;
    lock.unlock();
    if (hooks.stopNow(done) && !stopped) {
      stopped = true;
      stopDrivers();
    }
    lock.lock();
  }
}

void CellJobs::sample(const RankHooks& hooks, BenchClock::time_point now) {
  RankTimeline::Point p;
  p.atNs = hooks.clockNs(now);
  for (int d = 0; d < 2; ++d) {
    p.bytes += progress_.bytes[d].load(std::memory_order_relaxed);
    p.ops += progress_.ops[d].load(std::memory_order_relaxed);
  }
  samples_.push_back(p);
}

void CellJobs::stopDrivers() {
  std::lock_guard lock(driversMu_);
  for (auto& d : drivers_) {
    if (d) d->requestStop();
  }
}

void CellJobs::recordConnections(const Engine& engine, std::uint32_t j) {
  connections_[j] = engine.connections();
  for (auto& c : connections_[j]) c.job = j;
}

void CellJobs::finishJob(Engine& engine, std::uint32_t j) {
  watch(&engine, false);
  if (const int sig = interruptSignal()) {
    // Files this command laid out are removed next: what was written
    // into them need not be made durable first.
    const bool removed =
        settings_.created != nullptr && settings_.created->holdsAll(target_, jobFiles(options_, j));
    stopInterrupted(engine, sig, !removed);
  }
  if (profile_.writes()) {
    // The end of the write phase: until the data is durable (UNSTABLE writes need their
    // COMMIT).
    const auto c0 = BenchClock::now();
    engine.commit();
    commit_[j] = std::chrono::duration<double>(BenchClock::now() - c0).count();
  }
  recordConnections(engine, j);
  engine.finish();
  outages_[j] = engine.outages();
}

}  // namespace nfsrdma::bench::filerun
