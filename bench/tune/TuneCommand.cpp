// `nfsrdma-bench tune`: the settings that make a workload fast on a target,
// found by real runs of the file benchmark (bench/tune's search), explained,
// and handed over as the tools' own inputs. Our client's URL keys on an
// nfs: target (or the embedded nfs-ganesha, as `file` starts it, without
// --target); the kernel client's mount options on a knfs: export it mounts
// itself per trial; knfsd's threads and credits through nfsrdma-server,
// rolled back at the end.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "bench/BenchCommands.h"
#include "bench/file/FileCli.h"
#include "bench/file/FileEmbedded.h"
#include "bench/file/FileRun.h"
#include "bench/job/WorkloadOptions.h"
#include "bench/report/OutputFile.h"
#include "bench/tune/ServerKnobs.h"
#include "bench/tune/TrialMount.h"
#include "bench/tune/TuneBudget.h"
#include "bench/tune/TuneHtml.h"
#include "bench/tune/TuneReport.h"
#include "client/mount/MountHost.h"
#include "hostcheck/CommandRunner.h"
#include "util/ErrnoText.h"
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
  std::string knobs;         // empty: every knob of the space
  std::string jsonPath;      // "-": stdout, instead of the text
  std::string htmlPath;      // "-": stdout, instead of the text
  std::string serverConfig;  // nfsrdma-server's config of the server, for its knobs
  bool allowServerChanges = false;
  std::string serverExec;       // empty: the server is this host
  bool apply = false;           // keep the recommendation's server part applied
  std::string search = "tune";  // or "grid": every combination once
  WorkloadArgs workload;
};

po::options_description tuneOptions(TuneArgs& a) {
  po::options_description opts("nfsrdma-bench tune options");
  opts.add_options()("help,h", "show this help")(
      "profile", po::value(&a.profileName)->default_value(a.profileName),
      "the workload to make fast: 4k-randread, 4k-randwrite, 128k-read, 128k-write, 4m-read, "
      "4m-write, randrw[:N% reads]")(
      "target", po::value(&a.target),
      "nfs:nfs://host[:port]/export[?proto=tcp|rdma&...] (our client; its keys are the start "
      "point), knfs:SERVER:/export[?proto=rdma&nconnect=N&rsize=N&wsize=N&read_ahead_kb=N&...] "
      "(the kernel client, mounted by tune per trial) (default: the embedded nfs-ganesha on "
      "127.0.0.1)")(
      "objective", po::value(&a.objective)->default_value(a.objective),
      "iops, mibps, p99 (lower is better) or cpu-per-op (this process's CPU time per request)")(
      "budget", po::value(&a.budget)->default_value(a.budget),
      "the time the search may take: 90s, 10m, 1h")(
      "trials", po::value(&a.trials)->default_value(a.trials),
      "the most runs the search may make, the start point's included")(
      "knobs", po::value(&a.knobs),
      "only these knobs, comma-separated (default: every one that can matter for the profile)")(
      "json", po::value(&a.jsonPath),
      "write every trial and the recommendation as JSON to this file ('-': stdout)")(
      "html", po::value(&a.htmlPath),
      "write the report as one self-contained HTML page, a bar chart per knob ('-': stdout)")(
      "server-config", po::value(&a.serverConfig),
      "the knfsd server's nfsrdma-server config: tune varies its nfsd threads and svcrdma "
      "max_requests through nfsrdma-server apply, and rolls back at the end")(
      "allow-server-changes", po::bool_switch(&a.allowServerChanges),
      "let tune change a live server (without it the server's knobs are left alone)")(
      "server-exec", po::value(&a.serverExec),
      "run nfsrdma-server on the server through this prefix, which runs the one shell command "
      "line it is given there ('ssh root@srv'; default: this host)")(
      "search", po::value(&a.search)->default_value(a.search),
      "tune (noise, screening, the knobs that matter together, confirmation) or grid (every "
      "combination of the levels once: the exhaustive baseline; --trials must hold it)")(
      "apply", po::bool_switch(&a.apply),
      "end with the recommendation's server part applied (nfsrdma-server rollback undoes it) "
      "instead of rolling back");
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
  checkOutputPath(a.htmlPath, "--html");
  TunePlan plan;
  tool::parseOrUsageError([&] {
    plan.options = toFileOptions(a.workload);
    plan.profile = profileByName(a.profileName);
    validateOptions(plan.options, plan.profile);
    validateRwmixread(plan.options, {plan.profile});
    plan.profile = profileAsRun(plan.profile, plan.options);
    plan.objective = parseObjective(a.objective);
    plan.budget = TuneBudget(parseDuration(a.budget, "--budget"), a.trials);
    if (a.jsonPath == "-" && a.htmlPath == "-")
      throw std::invalid_argument("--json - and --html -: only one of them can go to stdout");
    if (a.search != "tune" && a.search != "grid")
      throw std::invalid_argument("--search " + a.search + ": expected tune or grid");
  });
  return plan;
}

// The start point's target: --target (nfs: or knfs:), or the embedded server's.
struct TuneTarget {
  std::unique_ptr<EmbeddedServer> embedded;
  TargetSpec spec;                     // nfs: the start's; knfs: unused
  std::optional<KernelTarget> kernel;  // knfs:
  std::filesystem::path mountDir;      // knfs: where each trial mounts (removed at the end)
  bool rdma = false;                   // the trials go over RDMA
  ServerStart serverStart;             // the server's knobs now, when it is reachable
  TuneTarget() = default;
  TuneTarget(TuneTarget&&) = default;
  TuneTarget& operator=(TuneTarget&&) = default;
  ~TuneTarget() {
    std::error_code ec;
    if (!mountDir.empty()) std::filesystem::remove(mountDir, ec);  // empty once unmounted
  }
};

// Why the server's knobs stay as they are, or empty when tune may turn them.
std::string serverWhyNot(const TuneArgs& a, const TuneTarget& t) {
  if (t.embedded) return "the embedded server is nfs-ganesha, not knfsd";
  if (a.serverConfig.empty()) {
    return "no --server-config (nfsrdma-server applies a change from the server's config)";
  }
  if (!a.allowServerChanges)
    return "--allow-server-changes not given: a live server is not touched";
  return {};
}

TuneTarget chooseTarget(const TuneArgs& a, const FileOptions& options) {
  TuneTarget t;
  if (a.target.rfind("knfs:", 0) == 0) {
    tool::parseOrUsageError([&] { t.kernel = parseKernelTarget(a.target); });
    if (const auto shared =
            mount::sharedClientMount(t.kernel->request, mount::readHostFacts().mounts)) {
      throw tool::UsageError("--target " + a.target + ": " + *shared +
                             ": tune's trials would measure that client, not their own options; "
                             "unmount it, or tune another NFS minor version (vers=) or address");
    }
    t.mountDir = std::filesystem::path(a.workload.workDir) /
                 ("nfsrdma-tune-mnt-" + std::to_string(::getpid()));
  } else if (a.target.empty()) {
    t.embedded = std::make_unique<EmbeddedServer>(a.workload.workDir);
    t.spec = t.embedded->nfsTarget("tcp");
  } else {
    t.spec = TargetSpec::parse("", a.target);
    if (t.spec.engine != EngineKind::Nfs) {
      throw tool::UsageError("--target " + a.target +
                             ": tune turns our client's knobs or the kernel client's mount "
                             "options: expected nfs:nfs://host/export[?proto=tcp|rdma], "
                             "knfs:SERVER:/export[?proto=rdma], or no --target for the embedded "
                             "server");
    }
  }
  t.spec.direct = options.direct;
  t.rdma = t.kernel ? t.kernel->request.proto == "rdma" : t.spec.nfs.proto == TransportKind::kRdma;
  return t;
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
              TuneBudget& budget, CreatedFiles& created, bool quiet, ServerSession* server)
      : run_(run),
        target_(target),
        plan_(plan),
        budget_(budget),
        created_(created),
        quiet_(quiet),
        server_(server) {}

  // The file set laid out and, for reads, read once into the server's
  // cache: not a trial (the first trial would otherwise pay for it).
  void warmUp() {
    FileOptions o = plan_.options;
    o.runtime = std::chrono::milliseconds(300);
    o.ramp = std::chrono::milliseconds(0);
    o.ioBytes = 0;
    RunSettings rs = settings();
    if (plan_.profile.reads() && !o.dropServerCache) rs.cache = CachePrep::Warm;
    TrialRun scratch;
    const RunResult r = onTarget(run_.search.start, scratch, [&](const TargetSpec& spec) {
      return runFileBenchmark(spec, plan_.profile, o, rs);
    });
    if (!r.ok())
      throw std::runtime_error("the warm-up run at the start point failed: " + r.firstError);
  }

  TrialFigure operator()(const Setting& s) {
    TrialRun trial;
    const auto begun = std::chrono::steady_clock::now();
    TrialFigure figure;
    try {
      figure = runTrial(s, trial);
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

  std::vector<TrialRun> take() { return std::move(trials_); }

 private:
  RunSettings settings() const {
    RunSettings rs;
    rs.progress = !quiet_ && progressWanted();
    rs.label = "tune " + plan_.profile.name;
    rs.created = &created_;
    return rs;
  }

  using RunOn = std::function<RunResult(const TargetSpec&)>;

  // Runs body on the setting's target: our client's URL with its keys, or
  // the kernel client's mount with its options (mounted for this trial
  // alone, unmounted after).
  RunResult onTarget(const Setting& s, TrialRun& trial, const RunOn& body) const {
    if (server_ != nullptr) server_->use(run_.space.knobs, s);
    if (!target_.kernel) {
      trial.ranWith = urlWithSetting(target_.spec.location, run_.space.knobs, s, run_.search.start);
      TargetSpec spec = TargetSpec::parse(target_.spec.name, "nfs:" + trial.ranWith);
      spec.localDir = target_.spec.localDir;
      spec.direct = target_.spec.direct;
      return body(spec);
    }
    const KernelSetting ks = kernelSetting(*target_.kernel, run_.space.knobs, s);
    hostcheck::SystemCommandRunner runner(std::chrono::seconds(60));
    TrialMount mount(ks, target_.mountDir, runner);
    trial.ranWith = mount.options();
    if (ks.readAheadKb) trial.ranWith += ", read_ahead_kb=" + std::to_string(*ks.readAheadKb);
    trial.note = mount.note();
    TargetSpec spec = TargetSpec::parse("knfs", "path:" + target_.mountDir.string());
    spec.direct = target_.spec.direct;
    RunResult r = body(spec);
    mount.unmount();
    return r;
  }

  TrialFigure runTrial(const Setting& s, TrialRun& trial) const {
    const double cpu0 = processCpuSeconds();
    trial.result = onTarget(s, trial, [&](const TargetSpec& spec) {
      return runFileBenchmark(spec, plan_.profile, plan_.options, settings());
    });
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
  ServerSession* server_;  // null: the server's knobs are not in play
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
  const ClientWorkload w = workloadOf(plan.profile, plan.options);
  if (target.kernel) {
    run.kernel = true;
    run.target = "the kernel client: " + a.target + " (mounted by tune in " +
                 target.mountDir.string() + ", once per trial)";
    run.startUrl = a.target;
    run.space = kernelKnobSpace(*target.kernel, w, plan.options.direct, !plan.profile.random);
  } else {
    run.startUrl = target.spec.location;
    run.space = clientKnobSpace(target.spec.nfs, w);
  }
  addServerKnobs(run.space, target.serverStart, target.rdma, serverWhyNot(a, target));
  tool::parseOrUsageError([&] {
    if (!a.knobs.empty()) restrictKnobs(run.space, a.knobs);
  });
  for (const Knob& k : run.space.knobs) run.search.start.push_back(k.start);
  return run;
}

std::string readConfigFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw tool::UsageError("--server-config " + path + ": " + util::errnoText(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The session on the server when any of its knobs is in play.
std::unique_ptr<ServerSession> serverSession(const TuneArgs& a, const TuneRun& run,
                                             ServerHost& host) {
  const bool inPlay = std::any_of(run.space.knobs.begin(), run.space.knobs.end(),
                                  [](const Knob& k) { return isServerKnob(k.name); });
  if (!inPlay) return nullptr;
  const std::string text = readConfigFile(a.serverConfig);
  tool::parseOrUsageError([&] { serverConfigVariant(text, {}, {}); });
  return std::make_unique<ServerSession>(host, text);
}

// Rolls the server back, or with --apply leaves the recommendation applied.
std::string endServer(ServerSession& server, const TuneRun& run, bool apply) {
  if (apply && !serverFragment(run.space.knobs, run.search.best, run.search.start).empty()) {
    server.use(run.space.knobs, run.search.best);
    return server.finish(true);
  }
  return server.finish(false);
}

// --search grid runs every setting: refused up front when --trials cannot hold them.
void checkGridFits(const TuneRun& run, std::size_t trials) {
  std::size_t settings = 1;
  for (const Knob& k : run.space.knobs) settings *= k.levels.size();
  if (settings <= trials) return;
  throw tool::UsageError("--search grid: " + std::to_string(settings) +
                         " settings, more than --trials " + std::to_string(trials) +
                         " (--knobs fewer, or --trials more)");
}

// The search itself, on the runner's trials, within the budget.
SearchResult search(const TuneArgs& a, const TuneRun& run, TuneBudget& budget, TrialRunner& runner,
                    double estimate) {
  if (a.search == "grid") return gridSearch(run.space.knobs, std::ref(runner), budget.trials());
  SearchOptions o;
  o.maxTrials = budget.trials();
  o.order = [&](const std::vector<std::string>& verdicts) {
    return knobsForVerdicts(run.space.knobs, verdicts);
  };
  o.trialsThatFit = [&] { return budget.trialsThatFit(estimate); };
  return tuneSearch(run.space.knobs, std::ref(runner), o);
}

int runTuneSteps(int argc, char** argv, CreatedFiles& created) {
  TuneArgs a;
  const po::options_description opts = tuneOptions(a);
  if (parseOptionsOrHelp(argc, argv, opts, "tune", "--target nfs:URL")) return tool::kExitSuccess;
  TunePlan plan = validateTuneArgs(a);
  // A trial: its runtime and ramp, plus connecting, the cache and closing.
  const double estimate =
      std::chrono::duration<double>(plan.options.runtime + plan.options.ramp).count() + 1.0;
  const SearchOptions defaults;
  tool::parseOrUsageError([&] {
    plan.budget.checkHolds(
        estimate, static_cast<std::size_t>(defaults.noiseRuns + 2 * defaults.confirmPairs) + 1);
  });
  TuneTarget target = chooseTarget(a, plan.options);
  hostcheck::SystemCommandRunner commands(std::chrono::seconds(120));
  ServerHost serverHost(commands, a.serverExec);
  if (serverWhyNot(a, target).empty()) target.serverStart = readServerStart(serverHost);
  TuneRun run = describeRun(a, plan, target);
  if (a.search == "grid") checkGridFits(run, plan.budget.trials());
  const bool quiet = a.jsonPath == "-" || a.htmlPath == "-";
  if (!quiet) {
    std::fputs(formatTuneHeader(run).c_str(), stdout);
    std::fflush(stdout);
  }
  // Before the first change: the checks; at the end (or an error, or
  // Ctrl-C), the rollback.
  std::unique_ptr<ServerSession> server = serverSession(a, run, serverHost);
  TrialRunner runner(run, target, plan, plan.budget, created, quiet, server.get());
  runner.warmUp();
  plan.budget.start();
  run.search = search(a, run, plan.budget, runner, estimate);
  run.trials = runner.take();
  if (target.kernel) {
    run.kernelHandOver = kernelHandOver(
        kernelSetting(*target.kernel, run.space.knobs, run.search.best), mount::readHostFacts());
  }
  run.seconds = plan.budget.elapsed();
  if (server) run.serverEnd = endServer(*server, run, a.apply);
  if (!quiet) std::fputs(formatTuneText(run).c_str(), stdout);
  if (!a.jsonPath.empty()) writeReportFile(a.jsonPath, tuneJson(run), "JSON");
  if (!a.htmlPath.empty()) writeReportFile(a.htmlPath, tuneHtml(run), "HTML");
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
