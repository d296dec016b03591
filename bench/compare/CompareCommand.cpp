// `nfsrdma-bench compare`: the main job. Runs profiles x targets and prints
// the side-by-side table of shared/FIELD-NOTES.md, writes JSON and HTML, and
// checks each figure against what bounds it. With no --target it runs on its
// embedded default: nfs-ganesha on 127.0.0.1 exporting a fresh directory on
// the local disk, measured as `local` (path engine, O_DIRECT), `nfs-tcp` (our
// client), `libnfs` (the anchor) and `nfs-rdma` when this host has an RDMA
// device and the client a transport for it (otherwise the column says why).
// Cells run profile by profile so the targets of one row run back to back.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "bench/BenchCommands.h"
#include "bench/compare/CompareConditions.h"
#include "bench/compare/CompareMatrix.h"
#include "bench/file/FileCli.h"
#include "bench/file/FileEmbedded.h"
#include "bench/file/FileReport.h"
#include "bench/file/FileRun.h"
#include "bench/compare/HtmlReport.h"
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

std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

__attribute__((format(printf, 1, 2))) std::string fmtDouble(const char* f, ...) {
  char buf[64];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
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

void writeFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
}

}  // namespace

int runCompareCommand(int argc, char** argv) {
  po::options_description opts("nfsrdma-bench compare options");
  std::vector<std::string> targetArgs;
  std::string profilesArg;
  std::string jsonPath = "nfsrdma-bench-compare.json";
  std::string htmlPath = "nfsrdma-bench-compare.html";
  std::string baselinePath, resultsPath, linkJson, serverMem, diskTarget;
  double threshold = 10;
  bool failOnRegression = false;
  WorkloadArgs wa;
  opts.add_options()("help,h", "show this help")(
      "target", po::value(&targetArgs)->composing(),
      "NAME=ENGINE:LOCATION, repeatable: local=path:/mnt/disk, nfs-tcp=nfs:nfs://host/export, "
      "nfs-rdma=nfs:nfs://host:20049/export?proto=rdma, libnfs=libnfs:nfs://host/export, "
      "knfs=path:/mnt/nfs "
      "(default: the embedded nfs-ganesha on 127.0.0.1 with local, nfs-tcp, libnfs, nfs-rdma)")(
      "profiles", po::value(&profilesArg),
      "comma list (default: all seven: 4k-randread ... randrw)")(
      "json", po::value(&jsonPath)->default_value(jsonPath),
      "write the results as JSON here ('' to skip)")("html",
                                                     po::value(&htmlPath)->default_value(htmlPath),
                                                     "write the HTML report here ('' to skip)")(
      "baseline", po::value(&baselinePath),
      "a saved compare JSON: show the change and flag regressions")(
      "threshold", po::value(&threshold)->default_value(threshold),
      "regression threshold, percent drop of MiB/s")("fail-on-regression",
                                                     po::bool_switch(&failOnRegression),
                                                     "exit 3 when a regression is flagged")(
      "results", po::value(&resultsPath), "re-render a saved compare JSON instead of running")(
      "link-json", po::value(&linkJson),
      "output of `nfsrdma-bench link --json` (or --both): the link bound")(
      "server-mem", po::value(&serverMem),
      "the server's RAM (e.g. 256g) when the server is remote")(
      "disk-target", po::value(&diskTarget),
      "target whose figures are the server's disk (default: 'local')");
  wa.runtime = 2;
  addWorkloadOptions(opts, wa);
  // Before the embedded server starts: a Ctrl-C must unwind through its stop.
  InterruptHandlers handlers;
  CreatedFiles created;
  // The embedded server (stopped, its directory removed) unwound before this.
  auto interrupted = [&](int signal) { return created.reportInterrupted("compare", signal); };
  try {
    po::variables_map vm;
    storeOptions(argc, argv, opts, vm, "--target NAME=nfs:URL");
    if (vm.count("help")) {
      std::cout << "usage: nfsrdma-bench compare [options]\n" << opts;
      return 0;
    }
    if (!(threshold > 0) || threshold >= 100)
      throw std::invalid_argument("--threshold must be in (0, 100) percent");
    // Re-rendering a saved run writes files only when asked for: it must not clobber that run.
    if (!resultsPath.empty()) {
      if (vm["json"].defaulted()) jsonPath.clear();
      if (vm["html"].defaulted()) htmlPath.clear();
    }
    // Everything that can fail without running is checked before the runs.
    checkOutputPath(jsonPath, "--json");
    checkOutputPath(htmlPath, "--html");
    if (jsonPath == "-" && htmlPath == "-") {
      throw std::invalid_argument(
          "--json - and --html - both want stdout: give one of them a file");
    }
    std::optional<CompareReport> before;
    if (!baselinePath.empty()) before = compareFromJson(parseJsonFile(baselinePath));

    CompareReport report;
    bool anyFailure = false;
    if (!resultsPath.empty()) {
      report = compareFromJson(parseJsonFile(resultsPath));
    } else {
      std::vector<FileProfile> profiles;
      for (const auto& n :
           profilesArg.empty() ? std::vector<std::string>{} : splitList(profilesArg)) {
        profiles.push_back(profileByName(n));
      }
      if (profiles.empty()) profiles = fileProfiles();
      FileOptions options = toFileOptions(wa);
      for (const auto& p : profiles) validateOptions(options, p);
      validateRwmixread(options, profiles);
      for (auto& p : profiles) p = profileAsRun(p, options);

      std::unique_ptr<EmbeddedServer> embedded;
      std::vector<TargetSpec> specs;
      std::string serverNote;
      const RdmaDevice rdma = findRdmaDevice();
      if (targetArgs.empty()) {
        embedded = std::make_unique<EmbeddedServer>(wa.workDir);
        serverNote = embedded->description();
        specs = {embedded->localTarget(), embedded->nfsTarget("tcp"), embedded->libnfsTarget(),
                 embedded->nfsTarget("rdma")};
        if (wa.readsPerCompound > 1) {
          // Beside nfs-tcp (one READ per RPC, like every client), not instead of it.
          TargetSpec v = embedded->nfsTarget("tcp");
          v.name = "nfs-tcp-v" + std::to_string(wa.readsPerCompound);
          v.nfs.readsPerCompound = wa.readsPerCompound;
          specs.insert(specs.begin() + 2, v);
        }
      } else {
        for (const auto& a : targetArgs) {
          const auto eq = a.find('=');
          if (eq == std::string::npos)
            throw std::invalid_argument("--target " + a + ": expected NAME=ENGINE:LOCATION");
          specs.push_back(TargetSpec::parse(a.substr(0, eq), a.substr(eq + 1)));
          for (std::size_t i = 0; i + 1 < specs.size(); ++i) {
            if (specs[i].name == specs.back().name) {
              throw std::invalid_argument("--target " + a + ": the name " + specs.back().name +
                                          " is taken; each target needs its own NAME");
            }
          }
        }
      }
      LinkBounds link;
      if (!linkJson.empty()) {
        link.figures = linkFiguresFromJson(parseJsonFile(linkJson));
        link.source = "nfsrdma-bench link, " + linkJson;
      }
      link.rdmaDevice = rdma.name;
      link.rdmaDeviceGbps = rdma.gbps;
      for (auto& s : specs) s.direct = options.direct;
      report.diskTarget = diskTarget.empty() ? "local" : diskTarget;
      if (!diskTarget.empty() && std::none_of(specs.begin(), specs.end(), [&](const TargetSpec& s) {
            return s.name == diskTarget;
          })) {
        throw std::invalid_argument("--disk-target " + diskTarget + ": no target has that name");
      }
      const ServerMemory mem = serverMemoryOf(
          specs,
          serverMem.empty() ? std::nullopt : std::optional<double>(parseServerMem(serverMem)),
          localMemoryBytes());
      report.serverMemoryBytes = mem.bytes;
      report.serverMemorySource = mem.source;

      // Targets and their availability, then the matrix.
      const bool progress = progressWanted();
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
        const bool isRdma = s.engine == EngineKind::Nfs && s.nfs.proto == TransportKind::kRdma;
        if (isRdma && rdma.name.empty()) {
          t.available = false;
          t.unavailable = kNoDevice;
        } else if (isRdma && embedded && !server::ganeshaSupportsNfsRdma()) {
          t.available = false;
          t.unavailable =
              "the embedded nfs-ganesha has no NFS/RDMA listener (Debian's build) — see "
              "nfsrdma-server doctor";
        } else if (std::string why = probe(s); !why.empty()) {
          t.available = false;
          t.unavailable = why;
        }
        attachLinkBound(t, s, link);
        usable.push_back(t.available);
        report.targets.push_back(std::move(t));
      }
      report.ratios = defaultRatios(report.targets);
      // One cache state for every target that runs (an unavailable one does not decide it).
      std::vector<TargetSpec> running;
      for (std::size_t i = 0; i < specs.size(); ++i) {
        if (usable[i]) running.push_back(specs[i]);
      }
      const ServerCachePlan cachePlan =
          planServerCache(running, options.dropServerCache,
                          options.dropServerCache ? dropCachesBlocked() : std::string(),
                          static_cast<double>(options.workingSetBytes()), report.serverMemoryBytes);
      for (const auto& p : profiles) {
        if (p.reads()) report.rows.emplace_back(p.name, IoDirection::Read);
        if (p.writes()) report.rows.emplace_back(p.name, IoDirection::Write);
      }

      report.config = {
          {"command", "nfsrdma-bench compare"},
          {"server", serverNote.empty() ? "given with --target" : serverNote},
          {"workload",
           "per job " + formatBytes(static_cast<double>(options.sizeBytes)) + " in " +
               std::to_string(options.nrfiles) + " file(s), numjobs " +
               std::to_string(options.numjobs) + ", iodepth " +
               (options.iodepth ? std::to_string(options.iodepth)
                                : "per profile (4k 32, 128k 8, 4m 2)") +
               (options.ioBytes
                    ? ", " + formatBytes(static_cast<double>(options.ioBytes)) + " per job"
                    : ", " + fmtDouble("%.1f", wa.runtime) + " s time-based") +
               " after a " + fmtDouble("%.1f", wa.ramp) + " s ramp, seed " +
               std::to_string(options.seed)},
          {"working set", formatBytes(static_cast<double>(options.workingSetBytes()))},
          {"server memory", report.serverMemoryBytes ? formatBytes(*report.serverMemoryBytes) +
                                                           " (" + report.serverMemorySource + ")"
                                                     : report.serverMemorySource},
          {"server cache", cachePlan.description},
          {"direct",
           options.direct
               ? "O_DIRECT for path targets; NFS targets bypass the client's cache by design"
               : "buffered"},
          {"verify", options.verify ? "on: every byte read checked, every write read back"
                                    : "off (--verify)"},
          {"rdma device", rdma.name.empty() ? "none" : rdma.name},
      };
      if (progress)
        std::fprintf(stderr, "nfsrdma-bench compare: %zu profiles x %zu targets\n", profiles.size(),
                     specs.size());

      anyFailure = runCompareMatrix(report, specs, usable, profiles, options, cachePlan, progress,
                                    runFileBenchmark, &created);
      computeFlags(report);

      // The closing note the issue asks for: our client against the anchor.
      const CompareCell* anchor = report.cell("4k-randread", IoDirection::Read, "libnfs");
      for (const auto& t : report.targets) {
        if (t.engine != "nfs" || t.nfsProto != "tcp") continue;
        const CompareCell* ours = report.cell("4k-randread", IoDirection::Read, t.name);
        if (ours != nullptr && anchor != nullptr && ours->ran && anchor->ran && anchor->iops > 0) {
          report.notes.push_back("4k-randread IOPS: " + t.name + " (our client) " +
                                 fmtDouble("%.0f", ours->iops) + ", libnfs (anchor) " +
                                 fmtDouble("%.0f", anchor->iops) + ": " +
                                 fmtDouble("%.2fx", ours->iops / anchor->iops) +
                                 " (goal >= 1.20x), same server, same run, " + "server cache " +
                                 ours->serverCache + " for both");
        }
      }
      for (const auto& t : report.targets) {
        if (t.engine == "nfs" && t.available) {
          report.notes.push_back(t.name + ": numjobs " + std::to_string(options.numjobs) +
                                 " = threads, each with its own connection and session" +
                                 (t.readsPerCompound > 1
                                      ? "; up to " + std::to_string(t.readsPerCompound) +
                                            " queued READs of one file per COMPOUND (one RPC)"
                                      : "; one READ per RPC"));
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

    if (before) applyBaseline(report, *before, baselinePath, threshold);
    // "-" is stdout (checkOutputPath accepts it), as for `file`: the JSON or
    // HTML instead of the text, which would make either unparseable.
    const bool toStdout = jsonPath == "-" || htmlPath == "-";
    if (!toStdout) std::fputs(formatCompareText(report).c_str(), stdout);
    if (jsonPath == "-") {
      std::fputs(compareToJson(report).c_str(), stdout);
    } else if (!jsonPath.empty()) {
      writeFile(jsonPath, compareToJson(report));
      // With --html - stdout is the HTML: where the JSON went is said on stderr.
      std::fprintf(toStdout ? stderr : stdout, "%s JSON: %s\n", toStdout ? "" : "\n",
                   jsonPath.c_str());
    }
    if (htmlPath == "-") {
      std::fputs(renderHtmlReport(report).c_str(), stdout);
    } else if (!htmlPath.empty()) {
      writeFile(htmlPath, renderHtmlReport(report));
      std::fprintf(toStdout ? stderr : stdout, " HTML: %s\n", htmlPath.c_str());
    }
    if (anyFailure) return 1;
    if (failOnRegression && report.regressions() > 0) return 3;
    return 0;
  } catch (const Interrupted& e) {
    return interrupted(e.signal());
  } catch (const std::exception& e) {
    // An error after Ctrl-C is the interrupt's: the cleanup still runs.
    if (const int sig = interruptSignal()) return interrupted(sig);
    std::fprintf(stderr, "nfsrdma-bench compare: %s\n", e.what());
    return 1;
  }
}

}  // namespace nfsrdma::bench
