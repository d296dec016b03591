// `nfsrdma-bench compare`: the main job. Runs profiles x targets and prints
// the side-by-side table engineers build from a dozen fio runs, writes JSON and HTML, and
// checks each figure against what bounds it. With no --target it runs on its
// embedded default: nfs-ganesha on 127.0.0.1 exporting a fresh directory on
// the local disk, measured as `local` (path engine, O_DIRECT), `nfs-tcp` (our
// client), `libnfs` (the anchor) and `nfs-rdma` when this host has an RDMA
// device and the client a transport for it (otherwise the column says why).
// Cells run profile by profile so the targets of one row run back to back.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdarg>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "bench/BenchCommands.h"
#include "bench/compare/CompareConditions.h"
#include "bench/compare/CompareMatrix.h"
#include "bench/compare/HtmlReport.h"
#include "bench/file/DeviceTargets.h"
#include "bench/file/FileCli.h"
#include "bench/file/FileClients.h"
#include "bench/file/FileEmbedded.h"
#include "bench/file/FileReport.h"
#include "bench/file/FileRun.h"
#include "bench/report/Format.h"
#include "bench/report/OutputFile.h"
#include "util/ToolCli.h"
#include "verbs/DeviceDiscovery.h"

namespace po = boost::program_options;

namespace nfsrdma::bench {
namespace {

constexpr const char* kNoDevice = "no RDMA device — see nfsrdma-server doctor";

struct RdmaDevice {
  std::string name;  // empty: none
  double gbps = 0;   // first active port's speed
};

RdmaDevice findRdmaDevice() {
  RdmaDevice d;
  try {
    for (const auto& dev : verbs::discoverDevices()) {
      for (const auto& p : dev.ports) {
        if (d.name.empty() || (d.gbps == 0 && p.state == "ACTIVE")) {
          d.name = dev.name + " port " + std::to_string(p.number);
          d.gbps = p.state == "ACTIVE" ? p.gbps : 0;
        }
      }
      if (d.name.empty()) d.name = dev.name;
    }
  } catch (const std::exception&) {
    // NoDeviceError and friends: no device is a normal case here.
  }
  return d;
}

std::optional<double> localMemoryBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemTotal:") return kib * 1024.0;
  }
  return std::nullopt;
}

// Connects once to see whether the target works; the reason when not.
std::string probe(const TargetSpec& t) {
  if (const int sig = interruptSignal()) throw Interrupted(sig);
  try {
    auto e = makeEngine(t);
    return {};
  } catch (const Interrupted&) {
    throw;  // Ctrl-C while connecting: not a reason the target is unavailable
  } catch (const std::exception& ex) {
    return ex.what();
  }
}

double parseServerMem(const std::string& text) {
  const std::uint64_t bytes = parseSize(text, "--server-mem");
  if (bytes == 0)
    throw std::invalid_argument("--server-mem '" + text + "': must be more than 0 (e.g. 256g)");
  return static_cast<double>(bytes);
}

// What the command line asked for.
struct CompareArgs {
  std::vector<std::string> targets;
  std::string profiles;
  std::string ratios;  // --ratios: the ratio columns instead of the default ones
  std::string jsonPath = "nfsrdma-bench-compare.json";
  std::string htmlPath = "nfsrdma-bench-compare.html";
  std::string baselinePath, resultsPath, linkJson, serverMem, diskTarget;
  double threshold = 10;
  bool failOnRegression = false;
  WorkloadArgs workload;
  ClientsArgs clients;
};

po::options_description compareOptions(CompareArgs& a) {
  po::options_description opts("nfsrdma-bench compare options");
  opts.add_options()("help,h", "show this help")(
      "target", po::value(&a.targets)->composing(),
      "NAME=ENGINE:LOCATION, repeatable: local=path:/mnt/disk, nfs-tcp=nfs:nfs://host/export, "
      "nfs-rdma=nfs:nfs://host:20049/export?proto=rdma, libnfs=libnfs:nfs://host/export, "
      "knfs=path:/mnt/nfs, nvmf-rdma=dev:/dev/nvme1n1 "
      "(default: the embedded nfs-ganesha on 127.0.0.1 with local, nfs-tcp, libnfs, nfs-rdma)")(
      "ratios", po::value(&a.ratios),
      "comma list of NUM/DEN target names: the ratio columns (default: those of nfs-rdma/nfs-tcp, "
      "nfs-tcp/libnfs, nfs-tcp/local, nfs-rdma/local, nfs-rdma/nvmf-rdma, nfs-rdma/iser, "
      "nvmf-rdma/nvme-tcp, iser/iscsi, nvmf-rdma/local whose targets ran)");
  addProfilesOption(opts, a.profiles);
  opts.add_options()("json", po::value(&a.jsonPath)->default_value(a.jsonPath),
                     "write the results as JSON here ('' to skip)")(
      "html", po::value(&a.htmlPath)->default_value(a.htmlPath),
      "write the HTML report here ('' to skip)")(
      "baseline", po::value(&a.baselinePath),
      "a saved compare JSON: show the change and flag regressions")(
      "threshold", po::value(&a.threshold)->default_value(a.threshold),
      "regression threshold, percent drop of MiB/s")("fail-on-regression",
                                                     po::bool_switch(&a.failOnRegression),
                                                     "exit 3 when a regression is flagged")(
      "results", po::value(&a.resultsPath), "re-render a saved compare JSON instead of running")(
      "link-json", po::value(&a.linkJson),
      "output of `nfsrdma-bench link --json` (or --both): the link bound")(
      "server-mem", po::value(&a.serverMem),
      "the server's RAM (e.g. 256g) when the server is remote")(
      "disk-target", po::value(&a.diskTarget),
      "target whose figures are the server's disk (default: 'local')");
  a.workload.runtime = 2;
  addWorkloadOptions(opts, a.workload);
  addClientsOptions(opts, a.clients);
  return opts;
}

// Everything about the outputs that can fail without running, before the runs.
void checkOutputs(CompareArgs& a, const po::variables_map& vm) {
  if (!(a.threshold > 0) || a.threshold >= 100)
    throw tool::UsageError("--threshold must be in (0, 100) percent");
  // Re-rendering a saved run writes files only when asked for: it must not clobber that run.
  if (!a.resultsPath.empty()) {
    if (vm["json"].defaulted()) a.jsonPath.clear();
    if (vm["html"].defaulted()) a.htmlPath.clear();
  }
  checkOutputPath(a.jsonPath, "--json");
  checkOutputPath(a.htmlPath, "--html");
  if (a.jsonPath == "-" && a.htmlPath == "-") {
    throw tool::UsageError("--json - and --html - both want stdout: give one of them a file");
  }
}

// The profiles as they run (options applied), after checking them together.
void prepareProfiles(std::vector<FileProfile>& profiles, const FileOptions& options) {
  for (const auto& p : profiles) validateOptions(options, p);
  validateRwmixread(options, profiles);
  for (auto& p : profiles) p = profileAsRun(p, options);
}

// Where the cells run: the embedded server's four (or five) targets, or --target's.
struct Targets {
  std::unique_ptr<EmbeddedServer> embedded;  // null: --target given
  std::vector<TargetSpec> specs;
  std::string serverNote;
};

std::vector<TargetSpec> parseTargetArgs(const std::vector<std::string>& args) {
  std::vector<TargetSpec> specs;
  for (const auto& a : args) {
    const auto eq = a.find('=');
    if (eq == std::string::npos)
      throw tool::UsageError("--target " + a + ": expected NAME=ENGINE:LOCATION");
    specs.push_back(TargetSpec::parse(a.substr(0, eq), a.substr(eq + 1)));
    for (std::size_t i = 0; i + 1 < specs.size(); ++i) {
      if (specs[i].name == specs.back().name) {
        throw tool::UsageError("--target " + a + ": the name " + specs.back().name +
                               " is taken; each target needs its own NAME");
      }
    }
  }
  return specs;
}

Targets embeddedTargets(const CompareArgs& a) {
  Targets t;
  t.embedded = std::make_unique<EmbeddedServer>(a.workload.workDir);
  t.serverNote = t.embedded->description();
  t.specs = {t.embedded->localTarget(), t.embedded->nfsTarget("tcp"), t.embedded->libnfsTarget(),
             t.embedded->nfsTarget("rdma")};
  if (a.workload.readsPerCompound > 1) {
    // Beside nfs-tcp (one READ per RPC, like every client), not instead of it.
    TargetSpec v = t.embedded->nfsTarget("tcp");
    v.name = "nfs-tcp-v" + std::to_string(a.workload.readsPerCompound);
    v.nfs.readsPerCompound = a.workload.readsPerCompound;
    t.specs.insert(t.specs.begin() + 2, v);
  }
  return t;
}

// Rank 0's embedded targets as the other ranks rebuild them: one line each.
std::string targetsText(const Targets& t) {
  std::string s = t.serverNote + "\n";
  for (const auto& x : t.specs) {
    s += x.name + "\t" + engineName(x.engine) + ":" + x.location + "\t" + x.localDir + "\t" +
         std::to_string(x.nfs.readsPerCompound) + "\n";
  }
  return s;
}

Targets targetsFromText(const std::string& text) {
  Targets t;
  std::istringstream in(text);
  std::getline(in, t.serverNote);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string name, spec, dir, rpc;
    std::getline(f, name, '\t');
    std::getline(f, spec, '\t');
    std::getline(f, dir, '\t');
    std::getline(f, rpc, '\t');
    TargetSpec x = TargetSpec::parse(name, spec);
    x.localDir = dir;
    x.nfs.readsPerCompound = static_cast<std::uint32_t>(std::stoul(rpc));
    t.specs.push_back(std::move(x));
  }
  return t;
}

// MPI without --target: rank 0 starts the embedded server and tells the
// others its targets; every rank learns whether that worked.
Targets sharedEmbeddedTargets(const CompareArgs& a, ClientRun& clients) {
  Targets t;
  std::string error;
  if (clients.rank() == 0) {
    try {
      t = embeddedTargets(a);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  const std::string text = clients.cluster()->broadcast(error.empty() ? targetsText(t) : "");
  if (text.empty()) {
    if (clients.rank() == 0) throw std::runtime_error(error);
    throw std::runtime_error("rank 0 could not start the embedded server (rank 0 says why)");
  }
  if (clients.rank() != 0) t = targetsFromText(text);
  return t;
}

Targets chooseTargets(const CompareArgs& a, ClientRun& clients) {
  Targets t;
  if (!a.targets.empty()) {
    std::vector<std::string> mine;
    for (const auto& x : a.targets) mine.push_back(withRank(x, clients.rank()));
    t.specs = parseTargetArgs(mine);
    return t;
  }
  if (clients.pod()) {
    throw std::invalid_argument(
        "--target is needed with --clients: the embedded server is one host's");
  }
  return clients.mpi() ? sharedEmbeddedTargets(a, clients) : embeddedTargets(a);
}

LinkBounds linkBoundsOf(const std::string& linkJson, const RdmaDevice& rdma) {
  LinkBounds link;
  if (!linkJson.empty()) {
    link.figures = linkFiguresFromJson(parseJsonFile(linkJson));
    link.source = "nfsrdma-bench link, " + linkJson;
  }
  link.rdmaDevice = rdma.name;
  link.rdmaDeviceGbps = rdma.gbps;
  return link;
}

// The report's disk target and server memory, from the options and the targets.
void describeServer(CompareReport& report, const CompareArgs& a,
                    const std::vector<TargetSpec>& specs) {
  report.diskTarget = a.diskTarget.empty() ? "local" : a.diskTarget;
  if (!a.diskTarget.empty() && std::none_of(specs.begin(), specs.end(), [&](const TargetSpec& s) {
        return s.name == a.diskTarget;
      })) {
    throw std::invalid_argument("--disk-target " + a.diskTarget + ": no target has that name");
  }
  const ServerMemory mem = serverMemoryOf(
      specs,
      a.serverMem.empty() ? std::nullopt : std::optional<double>(parseServerMem(a.serverMem)),
      localMemoryBytes());
  report.serverMemoryBytes = mem.bytes;
  report.serverMemorySource = mem.source;
}

// Why a target cannot run, or empty: no device for RDMA, no RDMA listener in
// the embedded ganesha, or what connecting to it said.
std::string unavailableReason(const TargetSpec& s, const RdmaDevice& rdma, bool embedded) {
  const bool isRdma = s.engine == EngineKind::Nfs && s.nfs.proto == TransportKind::kRdma;
  if (isRdma && rdma.name.empty()) return kNoDevice;
  if (isRdma && embedded && !server::ganeshaSupportsNfsRdma()) {
    return "the embedded nfs-ganesha has no NFS/RDMA listener (Debian's build) — see "
           "nfsrdma-server doctor";
  }
  return probe(s);
}

// The report's targets and whether each can run (probed once each).
std::vector<bool> describeTargets(CompareReport& report, const std::vector<TargetSpec>& specs,
                                  const LinkBounds& link, const RdmaDevice& rdma, bool embedded,
                                  const std::string& ratios) {
  std::vector<bool> usable;
  for (const auto& s : specs) {
    CompareTarget t;
    t.name = s.name;
    t.engine = engineName(s.engine);
    t.description = s.describe();
    t.overNetwork = s.name != report.diskTarget;
    if (s.engine == EngineKind::Nfs) {
      t.nfsProto = std::string(transportName(s.nfs.proto));
      t.readsPerCompound = s.nfs.readsPerCompound;
    }
    if (std::string why = unavailableReason(s, rdma, embedded); !why.empty()) {
      t.available = false;
      t.unavailable = why;
    }
    attachLinkBound(t, s, link);
    usable.push_back(t.available);
    report.targets.push_back(std::move(t));
  }
  report.ratios =
      ratios.empty() ? defaultRatios(report.targets) : parseRatios(ratios, report.targets);
  return usable;
}

// One cache state for every target that runs (an unavailable one does not decide it).
ServerCachePlan planCache(const CompareReport& report, const std::vector<TargetSpec>& specs,
                          const std::vector<bool>& usable, const FileOptions& options) {
  std::vector<TargetSpec> running;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (usable[i]) running.push_back(specs[i]);
  }
  return planServerCache(running, options.dropServerCache,
                         options.dropServerCache ? dropCachesBlocked() : std::string(),
                         static_cast<double>(options.workingSetBytes()), report.serverMemoryBytes);
}

std::string workloadLine(const FileOptions& options, const WorkloadArgs& wa) {
  return "per job " + formatBytes(static_cast<double>(options.sizeBytes)) + " in " +
         std::to_string(options.nrfiles) + " file(s), numjobs " + std::to_string(options.numjobs) +
         ", iodepth " +
         (options.iodepth ? std::to_string(options.iodepth) : "per profile (4k 32, 128k 8, 4m 2)") +
         (options.ioBytes ? ", " + formatBytes(static_cast<double>(options.ioBytes)) + " per job"
                          : ", " + fmt("%.1f", wa.runtime) + " s time-based") +
         " after a " + fmt("%.1f", wa.ramp) + " s ramp, seed " + std::to_string(options.seed);
}

// The header: what ran, where, under which conditions.
std::vector<std::pair<std::string, std::string>> compareConfig(
    const CompareReport& report, const std::string& serverNote, const FileOptions& options,
    const WorkloadArgs& wa, const ServerCachePlan& cachePlan, const RdmaDevice& rdma) {
  return {
      {"command", "nfsrdma-bench compare"},
      {"server", serverNote.empty() ? "given with --target" : serverNote},
      {"workload", workloadLine(options, wa)},
      {"working set", formatBytes(static_cast<double>(options.workingSetBytes()))},
      {"server memory", report.serverMemoryBytes ? formatBytes(*report.serverMemoryBytes) + " (" +
                                                       report.serverMemorySource + ")"
                                                 : report.serverMemorySource},
      {"server cache", cachePlan.description},
      {"direct", options.direct
                     ? "O_DIRECT for path targets; NFS targets bypass the client's cache by design"
                     : "buffered"},
      {"verify",
       options.verify ? "on: every byte read checked, every write read back" : "off (--verify)"},
      {"rdma device", rdma.name.empty() ? "none" : rdma.name},
  };
}

// The closing note the issue asks for: our client against the anchor.
void addAnchorNotes(CompareReport& report) {
  const CompareCell* anchor = report.cell("4k-randread", IoDirection::Read, "libnfs");
  for (const auto& t : report.targets) {
    if (t.engine != "nfs" || t.nfsProto != "tcp") continue;
    const CompareCell* ours = report.cell("4k-randread", IoDirection::Read, t.name);
    if (ours != nullptr && anchor != nullptr && ours->ran && anchor->ran && anchor->iops > 0) {
      report.notes.push_back(
          "4k-randread IOPS: " + t.name + " (our client) " + fmt("%.0f", ours->iops) +
          ", libnfs (anchor) " + fmt("%.0f", anchor->iops) + ": " +
          fmt("%.2fx", ours->iops / anchor->iops) + " (goal >= 1.20x), same server, same run, " +
          "server cache " + ours->serverCache + " for both");
    }
  }
}

void addNotes(CompareReport& report, const std::vector<TargetSpec>& specs,
              const FileOptions& options) {
  addAnchorNotes(report);
  for (const auto& t : report.targets) {
    if (t.engine == "nfs" && t.available) {
      report.notes.push_back(
          t.name + ": numjobs " + std::to_string(options.numjobs) +
          (options.sharedClient ? " = threads on one client (--client shared: one session, a "
                                  "connection per job unless the URL gives nconnect=)"
                                : " = threads, each with its own connection and session") +
          (t.readsPerCompound > 1 ? "; up to " + std::to_string(t.readsPerCompound) +
                                        " queued READs of one file per COMPOUND (one RPC)"
                                  : "; one READ per RPC"));
    } else if (options.sharedClient && t.available) {
      report.notes.push_back(t.name + ": --client shared is for our client only; the " + t.engine +
                             " engine's jobs ran with one " +
                             (t.engine == "libnfs" ? "libnfs context" : "io_uring") + " each");
    }
  }
  bool cacheServed = false;
  for (const auto& c : report.cells) {
    for (const auto& f : c.flags) cacheServed = cacheServed || f.kind == "server-page-cache";
  }
  if (!options.dropServerCache && cacheServed) {
    report.notes.push_back(
        "flagged reads come from the server's page cache: rerun with --drop-server-cache "
        "(server on this host) or a --size above the server's RAM to measure its disk");
  }
  for (auto& w : conditionWarnings(specs, options, report.diskTarget))
    report.notes.push_back(std::move(w));
  report.notes.push_back(
      "this machine may be shared and noisy: compare ratios, not absolute figures");
}

// A many-client run that lost a client: not a std::exception, so that the
// matrix, which records a failed cell and goes on, lets it through (the
// totals of a run without that client would look complete).
struct ClientsLost {
  std::vector<std::string> errors;  // at rank 0: each lost client's
};

// The targets on every client, or ClientsLost on every rank when some
// client could not have them (its --target with {rank}, rank 0's server).
Targets agreedTargets(const CompareArgs& a, ClientRun& clients) {
  if (!clients.mpi()) return chooseTargets(a, clients);
  Targets t;
  std::string error;
  try {
    t = chooseTargets(a, clients);
  } catch (const std::exception& e) {
    error = e.what();
  }
  const ClusterVerdict v = agree(*clients.cluster(), error);
  if (!v.allFine) throw ClientsLost{v.errors};
  return t;
}

// Under MPI a target runs only where every rank can reach it: the matrix
// must be the same on every rank.
void agreeOnTargets(CompareReport& report, std::vector<bool>& usable, ClientRun& clients) {
  if (!clients.mpi()) return;
  for (std::size_t i = 0; i < usable.size(); ++i) {
    const bool everywhere = clients.cluster()->allOk(usable[i]);
    if (usable[i] && !everywhere) {
      report.targets[i].available = false;
      report.targets[i].unavailable = "not reachable from every rank";
    }
    usable[i] = everywhere;
  }
}

// The matrix's runner as one client of many: rank 0 gets all clients' cells.
// A cell's number is its place in the whole matrix (profiles x targets),
// the same on every client whichever targets it could reach.
CellRunner clientRunner(ClientRun& clients, const std::vector<FileProfile>& profiles,
                        const std::vector<TargetSpec>& specs) {
  return [&clients, &profiles, &specs](const TargetSpec& t, const FileProfile& p,
                                       const FileOptions& o, const RunSettings& rs) {
    std::uint32_t k = 0;
    for (std::size_t pi = 0; pi < profiles.size(); ++pi) {
      for (std::size_t ti = 0; ti < specs.size(); ++ti) {
        if (profiles[pi].name == p.name && specs[ti].name == t.name) {
          k = static_cast<std::uint32_t>(pi * specs.size() + ti);
        }
      }
    }
    ClientRun::Cell cell = clients.run(t, p, o, rs, k);
    if (!cell.allRan)
      throw ClientsLost{cell.ranks ? cell.ranks->aggregate.errors : std::vector<std::string>{}};
    if (!cell.ranks) return cell.local;
    return mergeClients(cell.local, *cell.ranks, clients.clockNote(*cell.ranks));
  };
}

// Runs the matrix into report; true when a cell failed.
bool measure(CompareReport& report, const CompareArgs& a, ClientRun& clients,
             CreatedFiles& created) {
  std::vector<FileProfile> profiles = checkProfiles(a.profiles);
  const FileOptions options = toFileOptions(a.workload);
  prepareProfiles(profiles, options);
  const RdmaDevice rdma = findRdmaDevice();
  // Before the targets: a bad --link-json is refused before a server starts.
  const LinkBounds link = linkBoundsOf(a.linkJson, rdma);
  const Targets targets = agreedTargets(a, clients);
  std::vector<TargetSpec> specs = targets.specs;
  for (auto& s : specs) s.direct = options.direct;
  prepareDeviceTargets(specs, profiles, options);
  describeServer(report, a, specs);
  const bool progress = clients.leader() && progressWanted();
  std::vector<bool> usable =
      describeTargets(report, specs, link, rdma, targets.embedded != nullptr, a.ratios);
  agreeOnTargets(report, usable, clients);
  const ServerCachePlan cachePlan = planCache(report, specs, usable, options);
  for (const auto& p : profiles) {
    if (p.reads()) report.rows.emplace_back(p.name, IoDirection::Read);
    if (p.writes()) report.rows.emplace_back(p.name, IoDirection::Write);
  }
  report.config = compareConfig(report, targets.serverNote, options, a.workload, cachePlan, rdma);
  if (!clients.alone())
    report.config.emplace_back("clients", clients.describe() + ", each its own jobs and files");
  if (progress)
    std::fprintf(stderr, "nfsrdma-bench compare: %zu profiles x %zu targets\n", profiles.size(),
                 specs.size());
  const bool anyFailure = runCompareMatrix(
      report, specs, usable, profiles, clients.forThisClient(options), cachePlan, progress,
      clients.alone() ? CellRunner(runFileBenchmark) : clientRunner(clients, profiles, specs),
      &created);
  computeFlags(report);
  addNotes(report, specs, options);
  return anyFailure;
}

// The text on stdout, the JSON and the HTML where they were asked for.
void emit(const CompareReport& report, const CompareArgs& a) {
  // "-" is stdout (checkOutputPath accepts it), as for `file`: the JSON or
  // HTML instead of the text, which would make either unparseable.
  const bool toStdout = a.jsonPath == "-" || a.htmlPath == "-";
  if (!toStdout) std::fputs(formatCompareText(report).c_str(), stdout);
  if (!a.jsonPath.empty()) writeReportFile(a.jsonPath, compareToJson(report), "JSON");
  if (!a.jsonPath.empty() && a.jsonPath != "-") {
    // With --html - stdout is the HTML: where the JSON went is said on stderr.
    std::fprintf(toStdout ? stderr : stdout, "%s JSON: %s\n", toStdout ? "" : "\n",
                 a.jsonPath.c_str());
  }
  if (!a.htmlPath.empty()) writeReportFile(a.htmlPath, renderHtmlReport(report), "HTML report");
  if (!a.htmlPath.empty() && a.htmlPath != "-") {
    std::fprintf(toStdout ? stderr : stdout, " HTML: %s\n", a.htmlPath.c_str());
  }
}

// Parse, validate, measure (or read --results), compare with a baseline, print.
int runCompareSteps(int argc, char** argv, CreatedFiles& created) {
  CompareArgs a;
  const po::options_description opts = compareOptions(a);
  po::variables_map vm;
  storeOptions(argc, argv, opts, vm, "--target NAME=nfs:URL");
  if (vm.count("help")) {
    std::cout << "usage: nfsrdma-bench compare [options]\n" << opts;
    return tool::kExitSuccess;
  }
  checkOutputs(a, vm);
  // Each value by its rule before a server starts: a refused one is a usage error.
  tool::parseOrUsageError([&] {
    const FileOptions options = toFileOptions(a.workload);
    if (!a.resultsPath.empty()) return;
    std::vector<FileProfile> profiles = checkProfiles(a.profiles);
    prepareProfiles(profiles, options);
  });
  std::optional<CompareReport> before;
  if (!a.baselinePath.empty()) before = compareFromJson(parseJsonFile(a.baselinePath));
  CompareReport report;
  bool anyFailure = false;
  ClientRun clients = ClientRun::start(a.clients, toFileOptions(a.workload));
  if (!a.resultsPath.empty()) {
    report = compareFromJson(parseJsonFile(a.resultsPath));
  } else {
    try {
      anyFailure = measure(report, a, clients, created);
    } catch (const Interrupted&) {
      throw;  // mpirun passes the signal to every rank
    } catch (const std::exception& e) {
      if (!clients.mpi()) throw;
      // The other ranks may be in a collective step this one will not reach.
      std::fprintf(stderr, "nfsrdma-bench compare: rank %u (%s): %s\n", clients.rank(),
                   clients.host().c_str(), e.what());
      clients.cluster()->abortAll(tool::kExitFailure);
      return tool::kExitFailure;  // not reached: abortAll ends every rank
    } catch (const ClientsLost& lost) {
      for (const auto& e : lost.errors)
        std::fprintf(stderr, "nfsrdma-bench compare: %s\n", e.c_str());
      if (clients.leader()) std::fputs(" clients lost: the run ends, with no totals\n", stdout);
      return tool::kExitFailure;
    }
  }
  if (before) applyBaseline(report, *before, a.baselinePath, a.threshold);
  // A pod prints its cells' lines only; rank 0 the report of every rank.
  std::string emitError;
  try {
    if (clients.leader()) emit(report, a);
  } catch (const std::exception& e) {
    if (!clients.mpi()) throw;
    emitError = e.what();  // the others wait in the vote below: it must still happen
    std::fprintf(stderr, "nfsrdma-bench compare: %s\n", e.what());
  }
  if (clients.mpi()) anyFailure = !clients.cluster()->allOk(!anyFailure && emitError.empty());
  if (anyFailure) return tool::kExitFailure;
  if (a.failOnRegression && report.regressions() > 0) return 3;  // --fail-on-regression
  return tool::kExitSuccess;
}

}  // namespace

int runCompareCommand(int argc, char** argv) {
  // Before the embedded server starts: a Ctrl-C must unwind through its stop.
  InterruptHandlers handlers;
  CreatedFiles created;
  // The embedded server (stopped, its directory removed) unwinds before an
  // interrupt is reported.
  return tool::runReportingErrors("nfsrdma-bench compare", std::cerr, [&] {
    return runInterruptible("compare", created,
                            [&] { return runCompareSteps(argc, argv, created); });
  });
}

}  // namespace nfsrdma::bench
