// `nfsrdma-bench tune`: the settings that make a workload fast on a target,
// found by real runs of the file benchmark (bench/tune's search), explained,
// and handed over as the tools' own inputs. Our client's URL keys on an
// nfs: target (or the embedded nfs-ganesha, as `file` starts it, without
// --target); the kernel client's mount options on a knfs: export it mounts
// itself per trial; knfsd's threads and credits through nfsrdma-server,
// rolled back at the end.

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
#include "bench/tune/TuneBudget.h"
#include "bench/tune/TuneHtml.h"
#include "bench/tune/TuneReport.h"
#include "bench/tune/TuneTrials.h"
#include "bench/tune/TuneVersus.h"
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
  std::string serverExec;           // empty: the server is this host
  bool apply = false;               // keep the recommendation's server part applied
  std::string search = "tune";      // or "grid": every combination once
  std::vector<std::string> versus;  // [LABEL:]KEYS, measured against the recommendation
  int versusPairs = SearchOptions{}.confirmPairs;
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
      "versus", po::value(&a.versus)->composing(),
      "[LABEL:]KNOB=LEVEL&..., repeatable: after the search, the recommendation and this setting "
      "in alternated runs, their ratio with its 95% interval (a rule of thumb such as "
      "'rules:nconnect=8&nfsd.threads=8', a grid's best); knobs it leaves out stay at the start; "
      "any knob of the target, not only --knobs'; its runs are not counted in --trials or "
      "--budget")(
      "versus-pairs", po::value(&a.versusPairs)->default_value(a.versusPairs),
      "alternated pairs per --versus setting (2..50): more narrow the interval and steady the "
      "median")(
      "apply", po::bool_switch(&a.apply),
      "end with the recommendation's server part applied (nfsrdma-server rollback undoes it) "
      "instead of rolling back");
  addWorkloadOptions(opts, a.workload);
  addBlockSizeOption(opts, a.workload.bs);
  return opts;
}

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
    if (a.versusPairs < 2 || a.versusPairs > 50)
      throw std::invalid_argument("--versus-pairs " + std::to_string(a.versusPairs) +
                                  ": expected 2 to 50 pairs");
    if (a.search != "tune" && a.search != "grid")
      throw std::invalid_argument("--search " + a.search + ": expected tune or grid");
  });
  return plan;
}

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
    t.mountDir = trialMountDir(a.workload.workDir);
    t.startSpec = a.target;
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
  if (!t.kernel) t.startSpec = "nfs:" + t.spec.location;
  t.spec.direct = options.direct;
  t.rdma = t.kernel ? t.kernel->request.proto == "rdma" : t.spec.nfs.proto == TransportKind::kRdma;
  return t;
}

// Every knob the target and the workload have, before --knobs.
KnobSpace knobSpaceOf(const TuneArgs& a, const TunePlan& plan, const TuneTarget& target) {
  const ClientWorkload w = workloadOf(plan.profile, plan.options);
  KnobSpace space =
      target.kernel ? kernelKnobSpace(*target.kernel, w, plan.options.direct, !plan.profile.random)
                    : clientKnobSpace(target.spec.nfs, w);
  addServerKnobs(space, target.serverStart, target.rdma, serverWhyNot(a, target));
  return space;
}

// --versus: the settings over the target's whole space, checked before any run.
struct VersusPlan {
  KnobSpace space;
  std::vector<VersusSetting> settings;
};

VersusPlan planVersus(const TuneArgs& a, const TunePlan& plan, const TuneTarget& target) {
  VersusPlan v{knobSpaceOf(a, plan, target), {}};
  tool::parseOrUsageError([&] {
    for (const std::string& text : a.versus) v.settings.push_back(parseVersus(v.space, text));
  });
  return v;
}

bool changesServer(const KnobSpace& space, const Setting& s) {
  for (std::size_t i = 0; i < space.knobs.size(); ++i) {
    if (isServerKnob(space.knobs[i].name) && s[i] != space.knobs[i].start) return true;
  }
  return false;
}

// The recommendation against each --versus setting, alternated.
std::vector<VersusRun> runVersus(VersusPlan& v, int pairs, const TuneRun& run,
                                 TrialRunner& runner) {
  std::vector<VersusRun> out;
  if (v.settings.empty()) return out;
  const Setting rec = settingInSpace(v.space, run.space.knobs, run.search.best, run.search.start);
  for (const VersusSetting& s : v.settings) {
    out.push_back(measureVersus(s, rec, pairs, [&](const Setting& x) {
      return runner.outside(v.space, x, x == rec ? "tune" : s.label);
    }));
  }
  return out;
}

// The run's description before any trial: header facts and the knob space.
TuneRun describeRun(const TuneArgs& a, const TunePlan& plan, const TuneTarget& target) {
  TuneRun run;
  run.target = target.spec.describe();
  if (target.embedded) run.serverNote = target.embedded->description();
  run.embedded = target.embedded != nullptr;
  run.profile = plan.profile.name;
  run.objective = plan.objective;
  run.budget = plan.budget.describe();
  if (target.kernel) {
    run.kernel = true;
    run.target = "the kernel client: " + a.target + " (mounted by tune in " +
                 target.mountDir.string() + ", once per trial)";
    run.startUrl = a.target;
  } else {
    run.startUrl = target.spec.location;
  }
  run.space = knobSpaceOf(a, plan, target);
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
                                             const VersusPlan& versus, ServerHost& host) {
  const bool inPlay =
      std::any_of(run.space.knobs.begin(), run.space.knobs.end(),
                  [](const Knob& k) { return isServerKnob(k.name); }) ||
      std::any_of(versus.settings.begin(), versus.settings.end(),
                  [&](const VersusSetting& s) { return changesServer(versus.space, s.setting); });
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

// Rank 0 (or alone): the target, the server's session, the search and the report.
int leadTune(const TuneArgs& a, TunePlan& plan, double estimate, ClientRun& clients,
             CreatedFiles& created) {
  TuneTarget target = chooseTarget(a, plan.options);
  hostcheck::SystemCommandRunner commands(std::chrono::seconds(120));
  ServerHost serverHost(commands, a.serverExec);
  if (serverWhyNot(a, target).empty()) target.serverStart = readServerStart(serverHost);
  TuneRun run = describeRun(a, plan, target);
  if (clients.mpi()) run.clients = clients.describe();
  VersusPlan versus = planVersus(a, plan, target);
  if (a.search == "grid") checkGridFits(run, plan.budget.trials());
  const bool quiet = a.jsonPath == "-" || a.htmlPath == "-";
  if (!quiet) {
    std::fputs(formatTuneHeader(run).c_str(), stdout);
    std::fflush(stdout);
  }
  // Before the first change: the checks; at the end (or an error, or
  // Ctrl-C), the rollback.
  std::unique_ptr<ServerSession> server = serverSession(a, run, versus, serverHost);
  TrialRunner runner(run, target, plan, plan.budget, created, quiet, server.get(), clients);
  runner.warmUp();
  plan.budget.start();
  run.search = search(a, run, plan.budget, runner, estimate);
  run.trials = runner.take();
  run.seconds = plan.budget.elapsed();
  run.versus = runVersus(versus, a.versusPairs, run, runner);
  runner.end();
  if (target.kernel) {
    run.kernelHandOver = kernelHandOver(
        kernelSetting(*target.kernel, run.space.knobs, run.search.best), mount::readHostFacts());
  }
  if (server) run.serverEnd = endServer(*server, run, a.apply);
  if (!quiet) std::fputs(formatTuneText(run).c_str(), stdout);
  if (!a.jsonPath.empty()) writeReportFile(a.jsonPath, tuneJson(run), "JSON");
  if (!a.htmlPath.empty()) writeReportFile(a.htmlPath, tuneHtml(run), "HTML");
  return tool::kExitSuccess;
}

// Under mpirun, the most runs rank 0 can ask of the others: the trials,
// the warm-up and --versus' pairs.
std::size_t maxRuns(const TuneArgs& a, const TunePlan& plan) {
  return plan.budget.trials() + 1 + 2 * static_cast<std::size_t>(a.versusPairs) * a.versus.size();
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
  ClientRun clients;
  tool::parseOrUsageError([&] { clients = ClientRun::start(ClientsArgs{}, plan.options); });
  if (!clients.mpi()) return leadTune(a, plan, estimate, clients, created);
  if (plan.objective == Objective::CpuPerOp) {
    throw tool::UsageError(
        "--objective cpu-per-op reads this process's CPU time, and under mpirun the other "
        "ranks' is not measured: use iops, mibps or p99");
  }
  try {
    if (clients.rank() != 0) {
      return followTrials(clients, plan, a.workload.workDir, created, maxRuns(a, plan));
    }
    return leadTune(a, plan, estimate, clients, created);
  } catch (const Interrupted&) {
    throw;  // mpirun passes the signal to every rank
  } catch (const std::exception& e) {
    // The other ranks wait for a trial this one will not send or run.
    std::fprintf(stderr, "nfsrdma-bench tune: rank %u (%s): %s\n", clients.rank(),
                 clients.host().c_str(), e.what());
    const bool usage = dynamic_cast<const tool::UsageError*>(&e) != nullptr;
    clients.cluster()->abortAll(usage ? tool::kExitUsage : tool::kExitFailure);
    return tool::kExitFailure;  // not reached: abortAll ends every rank
  }
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
