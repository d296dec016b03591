// `nfsrdma-bench file`: one profile against one target, fio-style output and
// JSON. Without --target it starts the embedded nfs-ganesha and runs the
// chosen --engine against it (path = the export's directory on local disk).
#include <boost/program_options.hpp>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>

#include "bench/BenchCommands.h"
#include "bench/file/DeviceTargets.h"
#include "bench/file/FileCli.h"
#include "bench/file/FileClients.h"
#include "bench/file/FileEmbedded.h"
#include "bench/file/FileReport.h"
#include "bench/file/FileRun.h"
#include "bench/report/OutputFile.h"
#include "util/ToolCli.h"

namespace po = boost::program_options;

namespace nfsrdma::bench {
namespace {

// The command line of `file`, parsed.
struct FileArgs {
  std::string profileName = "4k-randread";
  std::string target;  // empty: the embedded server
  std::string engine = "nfs";
  std::string jsonPath;  // "-": stdout, instead of the text
  WorkloadArgs workload;
  ClientsArgs clients;
};

po::options_description fileOptions(FileArgs& a) {
  po::options_description opts("nfsrdma-bench file options");
  opts.add_options()("help,h", "show this help")(
      "profile", po::value(&a.profileName)->default_value(a.profileName),
      "4k-randread, 4k-randwrite, 128k-read, 128k-write, 4m-read, 4m-write, randrw[:N% reads]")(
      "target", po::value(&a.target),
      "nfs:nfs://host[:port]/export[?proto=tcp|rdma], libnfs:nfs://host[:port]/export, path:DIR or "
      "dev:DEVICE (a block device; writes need --allow-destructive-write DEVICE) "
      "(default: the embedded nfs-ganesha on 127.0.0.1)")(
      "engine", po::value(&a.engine)->default_value(a.engine),
      "with the embedded server: nfs, libnfs, or path (the export's directory)")(
      "json", po::value(&a.jsonPath),
      "write the results as JSON to this file ('-': stdout, instead of the text)");
  addWorkloadOptions(opts, a.workload);
  addBlockSizeOption(opts, a.workload.bs);
  addClientsOptions(opts, a.clients);
  return opts;
}

// What the arguments ask for, checked before anything runs.
struct FilePlan {
  FileOptions options;
  FileProfile profile;  // as it runs (the mix, the block size)
};

// A refused value is a usage error (exit 2); the --json directory is the
// host's, a failure (exit 1).
FilePlan validateFileArgs(const FileArgs& a) {
  checkOutputPath(a.jsonPath, "--json");
  FilePlan plan;
  tool::parseOrUsageError([&] {
    plan = FilePlan{toFileOptions(a.workload), profileByName(a.profileName)};
    validateOptions(plan.options, plan.profile);
    validateRwmixread(plan.options, {plan.profile});
    plan.profile = profileAsRun(plan.profile, plan.options);
    if (a.engine != "nfs" && a.engine != "libnfs" && a.engine != "path")
      throw std::invalid_argument("--engine " + a.engine + ": expected nfs, libnfs or path");
  });
  return plan;
}

// The target, and without --target the embedded server it is on (its
// description is the server note of the text and the JSON).
struct FileTarget {
  std::unique_ptr<EmbeddedServer> embedded;
  TargetSpec spec;
  std::string serverNote;
};

FileTarget embeddedTarget(const FileArgs& a) {
  FileTarget t;
  t.embedded = std::make_unique<EmbeddedServer>(a.workload.workDir);
  t.serverNote = t.embedded->description();
  if (a.engine == "nfs") {
    t.spec = t.embedded->nfsTarget("tcp");
    t.spec.nfs.readsPerCompound = a.workload.readsPerCompound;
  } else if (a.engine == "libnfs") {
    t.spec = t.embedded->libnfsTarget();
  } else if (a.engine == "path") {
    t.spec = t.embedded->localTarget();
  } else {
    throw std::invalid_argument("--engine " + a.engine + ": expected nfs, libnfs or path");
  }
  return t;
}

// --client shared is our client's: refused before anything starts for another engine.
void checkSharedClient(const FileOptions& options, EngineKind engine) {
  if (!options.sharedClient || engine == EngineKind::Nfs) return;
  throw std::invalid_argument(std::string("--client shared: the ") + engineName(engine) +
                              " engine has no shared client (only nfs, our client, shares one "
                              "session between jobs); use --client per-job");
}

// A dev: target checked (and allowed to be written) before anything runs.
void prepareDevice(TargetSpec& spec, const FilePlan& plan) {
  std::vector<TargetSpec> one{spec};
  prepareDeviceTargets(one, {plan.profile}, plan.options);
  spec = one.front();
}

FileTarget chooseTarget(const FileArgs& a, const FilePlan& plan) {
  const FileOptions& options = plan.options;
  FileTarget t;
  if (a.target.empty()) {
    tool::parseOrUsageError([&] {
      if (a.engine == "libnfs") checkSharedClient(options, EngineKind::Libnfs);
      if (a.engine == "path") checkSharedClient(options, EngineKind::Path);
    });
    t = embeddedTarget(a);
  } else {
    t.spec = TargetSpec::parse("", a.target);
    tool::parseOrUsageError([&] { checkSharedClient(options, t.spec.engine); });
  }
  t.spec.direct = options.direct;
  prepareDevice(t.spec, plan);
  return t;
}

void printHeader(const FileTarget& t, const FileProfile& profile) {
  std::printf("nfsrdma-bench file: %s on %s\n", profile.name.c_str(), t.spec.describe().c_str());
  if (!t.serverNote.empty()) std::printf(" server: %s\n", t.serverNote.c_str());
  std::fflush(stdout);
}

RunResult runOnTarget(const FileTarget& t, const FilePlan& plan, CreatedFiles& created) {
  RunSettings rs;
  rs.progress = progressWanted();
  rs.label = t.spec.name + " " + plan.profile.name;
  rs.created = &created;
  return runFileBenchmark(t.spec, plan.profile, plan.options, rs);
}

// ranks: a many-client run's breakdown, nested in the result (schema /3).
void writeJson(const std::string& jsonPath, const std::string& serverNote, const RunResult& r,
               const std::function<void(JsonWriter&)>& ranks = {}) {
  JsonWriter w;
  w.beginObject();
  w.field("schema", "nfsrdma-bench-file/3");
  writeVersionField(w);
  if (!serverNote.empty()) w.field("server", serverNote);
  writeRunJson(w, r, "result");
  if (ranks) ranks(w);
  w.endObject();
  writeReportFile(jsonPath, w.str(), "JSON");
}

// The exit status of a run that ended: 1 when a request failed or data
// did not verify, with the first error.
int runStatus(const RunResult& r) {
  if (r.ok()) return tool::kExitSuccess;
  std::fprintf(stderr, "nfsrdma-bench file: %s\n",
               r.errors ? r.firstError.c_str()
                        : (std::to_string(r.verify.mismatches) + " verify mismatches").c_str());
  return tool::kExitFailure;
}

// One process: choose the target, run, print (as before many clients).
int runAlone(const FileArgs& a, const FilePlan& plan, CreatedFiles& created) {
  const FileTarget t = chooseTarget(a, plan);
  const bool toStdout = a.jsonPath == "-";
  if (!toStdout) printHeader(t, plan.profile);
  const RunResult r = runOnTarget(t, plan, created);
  if (!r.unsupported.empty()) {
    // The engine cannot run this profile (libnfs's NFSv4 WRITEs): as a usage error.
    std::fprintf(stderr, "nfsrdma-bench file: %s on %s: %s\n", plan.profile.name.c_str(),
                 t.spec.name.c_str(), r.unsupported.c_str());
    return tool::kExitUsage;
  }
  if (!toStdout) std::fputs(formatRunText(r).c_str(), stdout);
  if (!a.jsonPath.empty()) writeJson(a.jsonPath, t.serverNote, r);
  return runStatus(r);
}

// A client's target: --target with {rank} replaced, or (MPI, no --target)
// rank 0's embedded server, whose address rank 0 tells the others.
std::string clientTarget(const FileArgs& a, const FilePlan& plan, ClientRun& clients,
                         FileTarget& t) {
  if (a.target.empty() && clients.pod()) {
    return "--target is needed with --clients: the embedded server is one host's";
  }
  std::string error;
  std::string spec;
  if (!a.target.empty()) {
    spec = "\n" + withRank(a.target, clients.rank()) + "\n";
  } else {
    if (clients.rank() == 0) {
      try {
        t = chooseTarget(a, plan);
        spec = t.spec.name + "\n" + engineName(t.spec.engine) + ":" + t.spec.location + "\n" +
               t.spec.localDir;
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    spec = clients.cluster()->broadcast(spec);
  }
  if (!error.empty()) return error;
  if (spec.empty()) return "rank 0 could not start the embedded server (its error is above)";
  try {
    const auto nl1 = spec.find('\n'), nl2 = spec.find('\n', nl1 + 1);
    if (t.spec.location.empty())
      t.spec = TargetSpec::parse(spec.substr(0, nl1), spec.substr(nl1 + 1, nl2 - nl1 - 1));
    if (a.target.empty()) t.spec.localDir = spec.substr(nl2 + 1);
    if (a.target.empty() && a.engine == "nfs")
      t.spec.nfs.readsPerCompound = a.workload.readsPerCompound;
    t.spec.direct = plan.options.direct;
    prepareDevice(t.spec, plan);
  } catch (const std::exception& e) {
    return (a.target.empty() ? "the embedded server's target: " : "--target: ") +
           std::string(e.what());
  }
  return {};
}

void printErrors(const std::vector<std::string>& errors) {
  for (const auto& e : errors) std::fprintf(stderr, "nfsrdma-bench file: %s\n", e.c_str());
}

// Rank 0's report of the cell: the figures of all ranks together, then the breakdown.
int reportClients(const FileArgs& a, const FileTarget& t, ClientRun& clients,
                  const ClientRun::Cell& cell) {
  const CellRanks& c = *cell.ranks;
  const RankClockNote clocks = clients.clockNote(c);
  if (!c.aggregate.totals) {
    printErrors(c.aggregate.errors);
    if (a.jsonPath != "-") std::fputs(formatRanksText(c.aggregate, clocks).c_str(), stdout);
    if (!a.jsonPath.empty()) {
      writeJson(a.jsonPath, t.serverNote, cell.local, [&](JsonWriter& w) {
        writeRanksJson(w, "clients", c.aggregate, clients.clients(), clocks);
      });
    }
    return tool::kExitFailure;
  }
  const RunResult merged = mergeClients(cell.local, c, clocks);
  if (a.jsonPath != "-") {
    std::fputs(formatRunText(merged).c_str(), stdout);
    std::fputs(formatRanksText(c.aggregate, clocks).c_str(), stdout);
  }
  if (!a.jsonPath.empty()) {
    writeJson(a.jsonPath, t.serverNote, merged, [&](JsonWriter& w) {
      writeRanksJson(w, "clients", c.aggregate, clients.clients(), clocks);
    });
  }
  return runStatus(merged);
}

// One client of many: the target, the cell on every client, rank 0's report.
int runAsClient(const FileArgs& a, const FilePlan& plan, ClientRun& clients,
                CreatedFiles& created) {
  FileTarget t;
  const std::string error = clientTarget(a, plan, clients, t);
  if (clients.mpi()) {
    const ClusterVerdict v = agree(*clients.cluster(), error);
    if (!v.allFine) {
      printErrors(v.errors);
      return tool::kExitFailure;
    }
  } else if (!error.empty()) {
    throw std::invalid_argument(error);
  }
  const bool toStdout = a.jsonPath == "-";
  if (clients.leader() && !toStdout) {
    printHeader(t, plan.profile);
    std::printf(" clients: %s, each with numjobs %u and its own files\n",
                clients.describe().c_str(), plan.options.numjobs);
  }
  RunSettings rs;
  rs.progress = clients.leader() && progressWanted();
  rs.label = t.spec.name + " " + plan.profile.name;
  rs.created = &created;
  const ClientRun::Cell cell =
      clients.run(t.spec, plan.profile, clients.forThisClient(plan.options), rs, 0);
  if (!cell.local.unsupported.empty()) {
    if (clients.leader()) {
      std::fprintf(stderr, "nfsrdma-bench file: %s on %s: %s\n", plan.profile.name.c_str(),
                   t.spec.name.c_str(), cell.local.unsupported.c_str());
    }
    return tool::kExitUsage;
  }
  if (clients.pod()) return runStatus(cell.local);
  int status = tool::kExitSuccess;
  try {
    if (cell.ranks) status = reportClients(a, t, clients, cell);
  } catch (const std::exception& e) {
    // The others wait in the vote below: it must still happen.
    std::fprintf(stderr, "nfsrdma-bench file: %s\n", e.what());
    status = tool::kExitFailure;
  }
  // Every rank leaves with the run's status, so mpirun's is the run's.
  return clients.cluster()->allOk(status == tool::kExitSuccess && cell.allRan) ? tool::kExitSuccess
                                                                               : tool::kExitFailure;
}

// Parse, validate, then run alone or as one client of many.
int runFileSteps(int argc, char** argv, CreatedFiles& created) {
  FileArgs a;
  const po::options_description opts = fileOptions(a);
  if (parseOptionsOrHelp(argc, argv, opts, "file", "--target nfs:URL (or path:DIR)")) {
    return tool::kExitSuccess;
  }
  const FilePlan plan = validateFileArgs(a);
  ClientRun clients = ClientRun::start(a.clients, plan.options);
  if (clients.alone()) return runAlone(a, plan, created);
  if (!clients.mpi()) return runAsClient(a, plan, clients, created);
  try {
    return runAsClient(a, plan, clients, created);
  } catch (const Interrupted&) {
    throw;  // mpirun passes the signal to every rank
  } catch (const std::exception& e) {
    // The other ranks may be in a collective step this one will not reach.
    std::fprintf(stderr, "nfsrdma-bench file: rank %u (%s): %s\n", clients.rank(),
                 clients.host().c_str(), e.what());
    clients.cluster()->abortAll(tool::kExitFailure);
    return tool::kExitFailure;  // not reached: abortAll ends every rank
  }
}

}  // namespace

int runFileCommand(int argc, char** argv) {
  // Before the embedded server starts: a Ctrl-C must unwind through its stop.
  InterruptHandlers handlers;
  CreatedFiles created;
  // The embedded server (stopped, its directory removed) unwinds before an
  // interrupt is reported.
  return tool::runReportingErrors("nfsrdma-bench file", std::cerr, [&] {
    return runInterruptible("file", created, [&] { return runFileSteps(argc, argv, created); });
  });
}

}  // namespace nfsrdma::bench
