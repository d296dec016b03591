// `nfsrdma-bench file`: one profile against one target, fio-style output and
// JSON. Without --target it starts the embedded nfs-ganesha and runs the
// chosen --engine against it (path = the export's directory on local disk).
#include <boost/program_options.hpp>
#include <cstdio>
#include <fstream>
#include <memory>

#include "bench/BenchCommands.h"
#include "bench/file/FileCli.h"
#include "bench/file/FileEmbedded.h"
#include "bench/file/FileReport.h"
#include "bench/file/FileRun.h"

namespace po = boost::program_options;

namespace nfsrdma::bench {

int runFileCommand(int argc, char** argv) {
  po::options_description opts("nfsrdma-bench file options");
  std::string profileName = "4k-randread";
  std::string target;
  std::string engine = "nfs";
  std::string jsonPath;
  WorkloadArgs wa;
  opts.add_options()("help,h", "show this help")(
      "profile", po::value(&profileName)->default_value(profileName),
      "4k-randread, 4k-randwrite, 128k-read, 128k-write, 4m-read, 4m-write, randrw[:N% reads]")(
      "target", po::value(&target),
      "nfs:nfs://host[:port]/export[?proto=tcp|rdma], libnfs:nfs://host[:port]/export, or path:DIR "
      "(default: the embedded nfs-ganesha on 127.0.0.1)")(
      "engine", po::value(&engine)->default_value(engine),
      "with the embedded server: nfs, libnfs, or path (the export's directory)")(
      "json", po::value(&jsonPath),
      "write the results as JSON to this file ('-': stdout, instead of the text)");
  addWorkloadOptions(opts, wa);
  // Before the embedded server starts: a Ctrl-C must unwind through its stop.
  InterruptHandlers handlers;
  CreatedFiles created;
  // The embedded server (stopped, its directory removed) unwound before this.
  auto interrupted = [&](int signal) { return created.reportInterrupted("file", signal); };
  try {
    if (parseOptionsOrHelp(argc, argv, opts, "file", "--target nfs:URL (or path:DIR)")) return 0;
    checkOutputPath(jsonPath, "--json");
    const FileOptions options = toFileOptions(wa);
    const FileProfile named = profileByName(profileName);
    validateOptions(options, named);
    validateRwmixread(options, {named});
    const FileProfile profile = profileAsRun(named, options);

    std::unique_ptr<EmbeddedServer> embedded;
    TargetSpec t;
    std::string serverNote;
    if (target.empty()) {
      embedded = std::make_unique<EmbeddedServer>(wa.workDir);
      serverNote = embedded->description();
      if (engine == "nfs") {
        t = embedded->nfsTarget("tcp");
        t.nfs.readsPerCompound = wa.readsPerCompound;
      } else if (engine == "libnfs") {
        t = embedded->libnfsTarget();
      } else if (engine == "path") {
        t = embedded->localTarget();
      } else {
        throw std::invalid_argument("--engine " + engine + ": expected nfs, libnfs or path");
      }
    } else {
      t = TargetSpec::parse("", target);
    }
    t.direct = options.direct;
    const bool toStdout = jsonPath == "-";
    if (!toStdout) {
      std::printf("nfsrdma-bench file: %s on %s\n", profile.name.c_str(), t.describe().c_str());
      if (!serverNote.empty()) std::printf(" server: %s\n", serverNote.c_str());
      std::fflush(stdout);
    }
    RunSettings rs;
    rs.progress = progressWanted();
    rs.label = t.name + " " + profile.name;
    rs.created = &created;
    const RunResult r = runFileBenchmark(t, profile, options, rs);
    if (!r.unsupported.empty()) {
      std::fprintf(stderr, "nfsrdma-bench file: %s on %s: %s\n", profile.name.c_str(),
                   t.name.c_str(), r.unsupported.c_str());
      return 2;
    }
    if (!toStdout) std::fputs(formatRunText(r).c_str(), stdout);
    if (!jsonPath.empty()) {
      JsonWriter w;
      w.beginObject();
      w.field("schema", "nfsrdma-bench-file/2");
      if (!serverNote.empty()) w.field("server", serverNote);
      writeRunJson(w, r, "result");
      w.endObject();
      if (toStdout) {
        std::fputs(w.str().c_str(), stdout);
      } else {
        std::ofstream js(jsonPath);
        js << w.str();
        if (!js) throw std::runtime_error("cannot write " + jsonPath);
      }
    }
    if (!r.ok()) {
      std::fprintf(stderr, "nfsrdma-bench file: %s\n",
                   r.errors ? r.firstError.c_str()
                            : (std::to_string(r.verify.mismatches) + " verify mismatches").c_str());
      return 1;
    }
    return 0;
  } catch (const Interrupted& e) {
    return interrupted(e.signal());
  } catch (const std::exception& e) {
    // An error after Ctrl-C (e.g. the embedded server's stop) is the
    // interrupt's: the cleanup still runs and the exit says which signal.
    if (const int sig = interruptSignal()) return interrupted(sig);
    std::fprintf(stderr, "nfsrdma-bench file: %s\n", e.what());
    return 1;
  }
}

}  // namespace nfsrdma::bench
