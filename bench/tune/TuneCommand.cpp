// `nfsrdma-bench tune`: the settings of our client that make a workload fast
// on a target, found by real runs of the file benchmark (bench/tune's
// search), explained, and handed over as the URL keys to use. Without
// --target it tunes against the embedded nfs-ganesha, as `file` starts it.
#include <sys/resource.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <memory>

#include "bench/BenchCommands.h"
#include "bench/file/FileCli.h"
#include "bench/file/FileEmbedded.h"
#include "bench/file/FileRun.h"
#include "bench/job/WorkloadOptions.h"
#include "bench/report/OutputFile.h"
#include "bench/tune/TuneBudget.h"
#include "bench/tune/TuneReport.h"
#include "util/ToolCli.h"

namespace po = boost::program_options;

namespace nfsrdma::bench {
namespace {

struct TuneArgs {
  std::string profileName = "4k-randread";
  std::string target;  // empty: the embedded server
  std::string objective = "iops";
  std::string budget = "10m";
  std::size_t trials = 60;
  std::string knobs;     // empty: every knob of the space
  std::string jsonPath;  // "-": stdout, instead of the text
  WorkloadArgs workload;
};

po::options_description tuneOptions(TuneArgs& a) {
  po::options_description opts("nfsrdma-bench tune options");
  opts.add_options()("help,h", "show this help")(
      "profile", po::value(&a.profileName)->default_value(a.profileName),
      "the workload to make fast: 4k-randread, 4k-randwrite, 128k-read, 128k-write, 4m-read, "
      "4m-write, randrw[:N% reads]")(
      "target", po::value(&a.target),
      "nfs:nfs://host[:port]/export[?proto=tcp|rdma&...] (its keys are the start point) "
      "(default: the embedded nfs-ganesha on 127.0.0.1)")(
      "objective", po::value(&a.objective)->default_value(a.objective),
      "iops, mibps, p99 (lower is better) or cpu-per-op (this process's CPU time per request)")(
      "budget", po::value(&a.budget)->default_value(a.budget),
      "the time the search may take: 90s, 10m, 1h")(
      "trials", po::value(&a.trials)->default_value(a.trials),
      "the most runs the search may make, the start point's included")(
      "knobs", po::value(&a.knobs),
      "only these knobs, comma-separated (default: every one that can matter for the profile)")(
      "json", po::value(&a.jsonPath),
      "write every trial and the recommendation as JSON to this file ('-': stdout)");
  addWorkloadOptions(opts, a.workload);
  return opts;
}

struct TunePlan {
  FileOptions options;
  FileProfile profile;
  Objective objective = Objective::Iops;
  TuneBudget budget{std::nullopt, 0};
};

TunePlan validateTuneArgs(const TuneArgs& a) {
  checkOutputPath(a.jsonPath, "--json");
  TunePlan plan;
  tool::parseOrUsageError([&] {
    plan.options = toFileOptions(a.workload);
    plan.profile = profileByName(a.profileName);
    validateOptions(plan.options, plan.profile);
    validateRwmixread(plan.options, {plan.profile});
    plan.profile = profileAsRun(plan.profile, plan.options);
    plan.objective = parseObjective(a.objective);
    plan.budget = TuneBudget(parseDuration(a.budget, "--budget"), a.trials);
  });
  return plan;
}

// The start point's target: --target (nfs: only), or the embedded server's.
struct TuneTarget {
  std::unique_ptr<EmbeddedServer> embedded;
  TargetSpec spec;
};

TuneTarget chooseTarget(const TuneArgs& a, const FileOptions& options) {
  TuneTarget t;
  if (a.target.empty()) {
    t.embedded = std::make_unique<EmbeddedServer>(a.workload.workDir);
    t.spec = t.embedded->nfsTarget("tcp");
  } else {
    t.spec = TargetSpec::parse("", a.target);
    if (t.spec.engine != EngineKind::Nfs) {
      throw tool::UsageError("--target " + a.target +
                             ": tune turns our client's knobs: expected nfs:nfs://host/export"
                             "[?proto=tcp|rdma], or no --target for the embedded server");
    }
  }
  t.spec.direct = options.direct;
  return t;
}

ClientWorkload workloadOf(const FileProfile& p, const FileOptions& o) {
  ClientWorkload w;
  w.blockSize = p.blockSize;
  w.iodepth = o.iodepth != 0 ? o.iodepth : p.defaultIodepth;
  w.numjobs = o.numjobs;
  w.reads = p.reads();
  return w;
}

double processCpuSeconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  const auto s = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return s(u.ru_utime) + s(u.ru_stime);
}

// Runs the trials of a search on the target, printing a line as each ends.
class TrialRunner {
 public:
  TrialRunner(const TuneRun& run, const TuneTarget& target, const TunePlan& plan,
              TuneBudget& budget, CreatedFiles& created, bool quiet)
      : run_(run),
        target_(target),
        plan_(plan),
        budget_(budget),
        created_(created),
        quiet_(quiet) {}

  // The file set laid out and, for reads, read once into the server's
  // cache: not a trial (the first trial would otherwise pay for it).
  void warmUp() {
    FileOptions o = plan_.options;
    o.runtime = std::chrono::milliseconds(300);
    o.ramp = std::chrono::milliseconds(0);
    o.ioBytes = 0;
    RunSettings rs = settings();
    if (plan_.profile.reads() && !o.dropServerCache) rs.cache = CachePrep::Warm;
    const RunResult r = runFileBenchmark(target_.spec, plan_.profile, o, rs);
    if (!r.ok())
      throw std::runtime_error("the warm-up run at the start point failed: " + r.firstError);
  }

  TrialFigure operator()(const Setting& s) {
    TrialRun trial;
    trial.url = urlWithSetting(target_.spec.location, run_.space.knobs, s, run_.search.start);
    const auto begun = std::chrono::steady_clock::now();
    TrialFigure figure;
    try {
      figure = runTrial(trial);
    } catch (const Interrupted&) {
      throw;
    } catch (const std::exception& e) {
      trial.error = e.what();
    }
    trial.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count();
    if (!trial.error.empty() && s == run_.search.start) {
      throw std::runtime_error("the start point (" + trial.url + ") failed: " + trial.error);
    }
    if (!quiet_) {
      std::fputs(formatTrialLine(run_, trials_.size() + 1, s, figure, trial).c_str(), stdout);
      std::fflush(stdout);
    }
    trials_.push_back(std::move(trial));
    budget_.trialEnded();
    return figure;
  }

  std::vector<TrialRun> take() { return std::move(trials_); }

 private:
  RunSettings settings() const {
    RunSettings rs;
    rs.progress = !quiet_ && progressWanted();
    rs.label = "tune " + plan_.profile.name;
    rs.created = &created_;
    return rs;
  }

  TrialFigure runTrial(TrialRun& trial) const {
    TargetSpec spec = TargetSpec::parse(target_.spec.name, "nfs:" + trial.url);
    spec.localDir = target_.spec.localDir;
    spec.direct = target_.spec.direct;
    const double cpu0 = processCpuSeconds();
    trial.result = runFileBenchmark(spec, plan_.profile, plan_.options, settings());
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

  const TuneRun& run_;
  const TuneTarget& target_;
  const TunePlan& plan_;
  TuneBudget& budget_;
  CreatedFiles& created_;
  bool quiet_;
  std::vector<TrialRun> trials_;
};

// The run's description before any trial: header facts and the knob space.
TuneRun describeRun(const TuneArgs& a, const TunePlan& plan, const TuneTarget& target) {
  TuneRun run;
  run.target = target.spec.describe();
  if (target.embedded) run.serverNote = target.embedded->description();
  run.embedded = target.embedded != nullptr;
  run.profile = plan.profile.name;
  run.objective = plan.objective;
  run.budget = plan.budget.describe();
  run.startUrl = target.spec.location;
  run.space = clientKnobSpace(target.spec.nfs, workloadOf(plan.profile, plan.options));
  tool::parseOrUsageError([&] {
    if (!a.knobs.empty()) restrictKnobs(run.space, a.knobs);
  });
  for (const Knob& k : run.space.knobs) run.search.start.push_back(k.start);
  return run;
}

int runTuneSteps(int argc, char** argv, CreatedFiles& created) {
  TuneArgs a;
  const po::options_description opts = tuneOptions(a);
  if (parseOptionsOrHelp(argc, argv, opts, "tune", "--target nfs:URL")) return tool::kExitSuccess;
  TunePlan plan = validateTuneArgs(a);
  SearchOptions search;
  search.maxTrials = plan.budget.trials();
  // A trial: its runtime and ramp, plus connecting, the cache and closing.
  const double estimate =
      std::chrono::duration<double>(plan.options.runtime + plan.options.ramp).count() + 1.0;
  tool::parseOrUsageError([&] {
    plan.budget.checkHolds(
        estimate, static_cast<std::size_t>(search.noiseRuns + 2 * search.confirmPairs) + 1);
  });
  const TuneTarget target = chooseTarget(a, plan.options);
  TuneRun run = describeRun(a, plan, target);
  const bool quiet = a.jsonPath == "-";
  if (!quiet) {
    std::fputs(formatTuneHeader(run).c_str(), stdout);
    std::fflush(stdout);
  }
  TrialRunner runner(run, target, plan, plan.budget, created, quiet);
  runner.warmUp();
  plan.budget.start();
  search.order = [&](const std::vector<std::string>& verdicts) {
    return knobsForVerdicts(run.space.knobs, verdicts);
  };
  search.trialsThatFit = [&] { return plan.budget.trialsThatFit(estimate); };
  SearchResult result = tuneSearch(run.space.knobs, std::ref(runner), search);
  run.search = std::move(result);
  run.trials = runner.take();
  run.seconds = plan.budget.elapsed();
  if (!quiet) std::fputs(formatTuneText(run).c_str(), stdout);
  if (!a.jsonPath.empty()) writeReportFile(a.jsonPath, tuneJson(run), "JSON");
  return tool::kExitSuccess;
}

}  // namespace

int runTuneCommand(int argc, char** argv) {
  InterruptHandlers handlers;
  CreatedFiles created;
  return tool::runReportingErrors("nfsrdma-bench tune", std::cerr, [&] {
    return runInterruptible("tune", created, [&] { return runTuneSteps(argc, argv, created); });
  });
}

}  // namespace nfsrdma::bench
