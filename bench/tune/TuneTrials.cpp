#include "bench/tune/TuneTrials.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "bench/file/FileCli.h"
#include "bench/tune/TrialMount.h"
#include "hostcheck/CommandRunner.h"

namespace nfsrdma::bench {

TuneTarget::~TuneTarget() {
  std::error_code ec;
  if (!mountDir.empty()) std::filesystem::remove(mountDir, ec);  // empty once unmounted
}

std::filesystem::path trialMountDir(const std::string& workDir) {
  return std::filesystem::path(workDir) / ("nfsrdma-tune-mnt-" + std::to_string(::getpid()));
}

ClientWorkload workloadOf(const FileProfile& p, const FileOptions& o) {
  ClientWorkload w;
  w.blockSize = p.blockSize;
  w.iodepth = o.iodepth != 0 ? o.iodepth : p.defaultIodepth;
  w.numjobs = o.numjobs;
  w.reads = p.reads();
  w.writes = p.writes();
  return w;
}

namespace {

double processCpuSeconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  const auto s = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return s(u.ru_utime) + s(u.ru_stime);
}

// One run as every rank runs it: the target as text ("nfs:URL" with the
// setting's keys, or the knfs: target with its mount options), and whether
// it is the warm-up. Rank 0 sends it to the others as lines.
struct RunOrder {
  std::string name;  // the target's name in the report
  std::string spec;
  std::string localDir;  // the embedded server's export directory, or empty
  bool warm = false;
};

constexpr const char* kEnd = "end";

std::string encode(const RunOrder& o) {
  return "run\n" + o.name + "\n" + o.spec + "\n" + o.localDir + "\n" + (o.warm ? "1" : "0");
}

RunOrder decode(const std::string& text) {
  std::istringstream in(text);
  std::string word, warm;
  RunOrder o;
  if (!std::getline(in, word) || word != "run" || !std::getline(in, o.name) ||
      !std::getline(in, o.spec) || !std::getline(in, o.localDir) || !std::getline(in, warm)) {
    throw std::runtime_error("rank 0 sent no trial: '" + text + "'");
  }
  o.warm = warm == "1";
  return o;
}

// The warm-up: a short run that lays out the files (and warms the cache).
FileOptions warmUpOptions(FileOptions o) {
  o.runtime = std::chrono::milliseconds(300);
  o.ramp = std::chrono::milliseconds(0);
  o.ioBytes = 0;
  return o;
}

// The cell on this client; at rank 0 of an MPI launch, every rank's together.
RunResult runCell(ClientRun& clients, const TargetSpec& spec, const TunePlan& plan,
                  const RunOrder& order, RunSettings rs, std::uint32_t cell) {
  FileOptions o = order.warm ? warmUpOptions(plan.options) : plan.options;
  if (order.warm && plan.profile.reads() && !o.dropServerCache) rs.cache = CachePrep::Warm;
  ClientRun::Cell c = clients.run(spec, plan.profile, clients.forThisClient(o), rs, cell);
  if (!c.ranks) return c.local;
  if (!c.allRan || !c.ranks->aggregate.totals) {
    RunResult r = c.local;
    std::string why;
    for (const auto& e : c.ranks->aggregate.errors) why += (why.empty() ? "" : "; ") + e;
    r.errors = std::max<std::uint64_t>(r.errors, 1);
    r.firstError = why.empty() ? "a rank could not run the trial" : why;
    return r;
  }
  return mergeClients(c.local, *c.ranks, clients.clockNote(*c.ranks));
}

// Every rank's agreement that its part of a run is ready (a mount); the
// errors of those that are not, at rank 0. Alone: the error itself.
std::string agreeReady(ClientRun& clients, const std::string& error) {
  if (!clients.mpi()) return error;
  const ClusterVerdict v = agree(*clients.cluster(), error);
  if (v.allFine) return {};
  std::string why;
  for (const auto& e : v.errors) why += (why.empty() ? "" : "; ") + e;
  return why.empty() ? "a rank could not get ready for the trial" : why;
}

// The order run here, on every rank at once: an nfs: URL as it is, a
// knfs: target mounted in mountDir for it alone. trial gets what it ran on.
RunResult runOrder(ClientRun& clients, const RunOrder& order, const TunePlan& plan,
                   const std::filesystem::path& mountDir, const RunSettings& rs, std::uint32_t cell,
                   TrialRun& trial) {
  if (order.spec.rfind("knfs:", 0) != 0) {
    trial.ranWith = order.spec.substr(4);
    TargetSpec spec = TargetSpec::parse(order.name, order.spec);
    spec.localDir = order.localDir;
    spec.direct = plan.options.direct;
    return runCell(clients, spec, plan, order, rs, cell);
  }
  const KernelSetting ks = kernelSetting(parseKernelTarget(order.spec), {}, {});
  hostcheck::SystemCommandRunner runner(std::chrono::seconds(60));
  std::unique_ptr<TrialMount> mount;
  std::string error;
  try {
    mount = std::make_unique<TrialMount>(ks, mountDir, runner);
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  error = agreeReady(clients, error);
  if (!error.empty()) throw std::runtime_error(error);
  trial.ranWith = mount->options();
  if (ks.readAheadKb) trial.ranWith += ", read_ahead_kb=" + std::to_string(*ks.readAheadKb);
  trial.note = mount->note();
  TargetSpec spec = TargetSpec::parse("knfs", "path:" + mountDir.string());
  spec.direct = plan.options.direct;
  RunResult r = runCell(clients, spec, plan, order, rs, cell);
  mount->unmount();
  return r;
}

}  // namespace

TrialRunner::TrialRunner(const TuneRun& run, const TuneTarget& target, const TunePlan& plan,
                         TuneBudget& budget, CreatedFiles& created, bool quiet,
                         ServerSession* server, ClientRun& clients)
    : run_(run),
      target_(target),
      plan_(plan),
      budget_(budget),
      created_(created),
      quiet_(quiet),
      server_(server),
      clients_(clients) {}

RunSettings TrialRunner::settings() const {
  RunSettings rs;
  rs.progress = !quiet_ && progressWanted();
  rs.label = "tune " + plan_.profile.name;
  rs.created = &created_;
  return rs;
}

void TrialRunner::warmUp() {
  TrialRun scratch;
  const RunResult r =
      runSetting(run_.space.knobs, run_.search.start, run_.search.start, true, scratch);
  if (!r.ok())
    throw std::runtime_error("the warm-up run at the start point failed: " + r.firstError);
}

RunResult TrialRunner::runSetting(const std::vector<Knob>& knobs, const Setting& s,
                                  const Setting& start, bool warm, TrialRun& trial) {
  if (server_ != nullptr) server_->use(knobs, s);
  RunOrder order;
  order.name = target_.kernel ? "knfs" : target_.spec.name;
  order.spec = urlWithSetting(target_.startSpec, knobs, s, start);
  order.localDir = target_.spec.localDir;
  order.warm = warm;
  if (clients_.mpi()) clients_.cluster()->broadcast(encode(order));
  return runOrder(clients_, order, plan_, target_.mountDir, settings(), cells_++, trial);
}

TrialFigure TrialRunner::runTrial(const std::vector<Knob>& knobs, const Setting& s,
                                  const Setting& start, TrialRun& trial) {
  const double cpu0 = processCpuSeconds();
  trial.result = runSetting(knobs, s, start, false, trial);
  trial.cpuSeconds = processCpuSeconds() - cpu0;
  TrialFigure figure;
  if (!trial.result.ok()) {
    trial.error = trial.result.firstError.empty() ? "verify mismatches" : trial.result.firstError;
    return figure;
  }
  figure.value = objectiveValue(plan_.objective, trial.result, trial.cpuSeconds);
  if (trial.result.sampled()) figure.verdict = trial.result.bound.tag();
  return figure;
}

TrialFigure TrialRunner::operator()(const Setting& s) {
  TrialRun trial;
  const auto begun = std::chrono::steady_clock::now();
  TrialFigure figure;
  try {
    figure = runTrial(run_.space.knobs, s, run_.search.start, trial);
  } catch (const Interrupted&) {
    throw;
  } catch (const ServerChangeFailed&) {
    throw;  // the run ends, the server rolled back on the way out
  } catch (const std::exception& e) {
    trial.error = e.what();
  }
  trial.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count();
  if (!trial.error.empty() && s == run_.search.start) {
    throw std::runtime_error("the start point (" + trial.ranWith + ") failed: " + trial.error);
  }
  if (!quiet_) {
    std::fputs(formatTrialLine(run_, trials_.size() + 1, s, figure, trial).c_str(), stdout);
    std::fflush(stdout);
  }
  trials_.push_back(std::move(trial));
  budget_.trialEnded();
  return figure;
}

double TrialRunner::outside(const KnobSpace& space, const Setting& s, const std::string& label) {
  Setting start;
  for (const Knob& k : space.knobs) start.push_back(k.start);
  TrialRun trial;
  const TrialFigure figure = runTrial(space.knobs, s, start, trial);
  if (!trial.error.empty()) throw std::runtime_error(trial.ranWith + ": " + trial.error);
  if (!quiet_) {
    const std::string keys = changedKeys(space.knobs, s, start, target_.kernel ? ',' : '&');
    std::printf("versus %-9s %-34s %s  bound: %s\n", label.c_str(),
                keys.empty() ? "start" : keys.c_str(),
                objectiveText(plan_.objective, figure.value).c_str(),
                figure.verdict.empty() ? "-" : figure.verdict.c_str());
    std::fflush(stdout);
  }
  return figure.value;
}

void TrialRunner::end() {
  if (clients_.mpi()) clients_.cluster()->broadcast(kEnd);
}

int followTrials(ClientRun& clients, const TunePlan& plan, const std::string& workDir,
                 CreatedFiles& created, std::size_t maxRuns) {
  struct MountDir {
    std::filesystem::path path;
    ~MountDir() {
      std::error_code ec;
      std::filesystem::remove(path, ec);
    }
  } dir{trialMountDir(workDir)};
  RunSettings rs;
  rs.label = "tune " + plan.profile.name;
  rs.created = &created;
  for (std::uint32_t cell = 0; cell <= maxRuns; ++cell) {
    const std::string text = clients.cluster()->broadcast("");
    if (text == kEnd) return 0;
    TrialRun scratch;
    try {
      runOrder(clients, decode(text), plan, dir.path, rs, cell, scratch);
    } catch (const Interrupted&) {
      throw;
    } catch (const std::exception&) {
      // Rank 0 has the error (agreeReady, or the cell's gather) for its trial line.
    }
  }
  throw std::runtime_error("rank 0 asked for more than " + std::to_string(maxRuns) +
                           " runs (the trials, the warm-up and --versus' pairs)");
}

}  // namespace nfsrdma::bench
