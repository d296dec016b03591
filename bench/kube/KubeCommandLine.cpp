#include "bench/kube/KubeCommandLine.h"

#include <sstream>

namespace nfsrdma::bench::kube {
namespace {

// "30", "0.3": as a person writes the option (compare reads either).
std::string seconds(double s) {
  std::ostringstream out;
  out << s;
  return out.str();
}

std::string join(const std::vector<std::string>& words, char sep) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += sep;
    out += w;
  }
  return out;
}

std::string envRef(const std::string& key) {
  return "$(" + key + ")";
}

std::string targetKey(std::size_t i) {
  return "NFSRDMA_TARGET_" + std::to_string(i);
}

}  // namespace

Settings runSettings(const KubeRun& run) {
  Settings s;
  for (std::size_t i = 0; i < run.targets.size(); ++i)
    s.emplace_back(targetKey(i), run.targets[i].text());
  const KubeWorkload& w = run.workload;
  if (!w.profiles.empty()) s.emplace_back("NFSRDMA_PROFILES", join(w.profiles, ','));
  s.emplace_back("NFSRDMA_RUNTIME", seconds(w.runtime));
  s.emplace_back("NFSRDMA_RAMP", seconds(w.ramp));
  s.emplace_back("NFSRDMA_SIZE", w.size);
  s.emplace_back("NFSRDMA_IODEPTH", std::to_string(w.iodepth));
  s.emplace_back("NFSRDMA_NUMJOBS", std::to_string(w.numjobs));
  if (!run.mpiOperator) {
    s.emplace_back("NFSRDMA_CLIENTS", std::to_string(run.clients));
    s.emplace_back("NFSRDMA_START_AT", std::to_string(run.startAt));
    s.emplace_back("NFSRDMA_CELL_SLOT", std::to_string(run.cellSlot));
  }
  return s;
}

std::vector<std::string> compareArgs(const KubeRun& run) {
  std::vector<std::string> args{"compare"};
  for (std::size_t i = 0; i < run.targets.size(); ++i) {
    args.insert(args.end(), {"--target", envRef(targetKey(i))});
  }
  if (!run.workload.profiles.empty())
    args.insert(args.end(), {"--profiles", envRef("NFSRDMA_PROFILES")});
  args.insert(args.end(), {"--runtime", envRef("NFSRDMA_RUNTIME"), "--ramp", envRef("NFSRDMA_RAMP"),
                           "--size", envRef("NFSRDMA_SIZE"), "--iodepth", envRef("NFSRDMA_IODEPTH"),
                           "--numjobs", envRef("NFSRDMA_NUMJOBS")});
  if (run.workload.verify) args.emplace_back("--verify");
  if (!run.mpiOperator) {
    args.insert(args.end(), {"--clients", envRef("NFSRDMA_CLIENTS"), "--client-index",
                             envRef(kIndexEnv), "--start-at", envRef("NFSRDMA_START_AT"),
                             "--cell-slot", envRef("NFSRDMA_CELL_SLOT")});
  }
  // Each cell's result is one JSON line on stdout (the pod's log); no files.
  args.insert(args.end(), {"--json", "", "--html", ""});
  return args;
}

std::vector<std::string> launcherCommand(const KubeRun& run) {
  // The container runs as root, which mpirun refuses without being told.
  // No binding: each worker runs one rank that starts its own job threads.
  // ob1 over TCP keeps MPI's few barrier and gather messages off the RDMA
  // device the benchmark measures.
  std::vector<std::string> cmd{"mpirun",       "--allow-run-as-root",
                               "-np",          std::to_string(run.clients),
                               "--bind-to",    "none",
                               "--mca",        "pml",
                               "ob1",          "--mca",
                               "btl",          "self,tcp",
                               "nfsrdma-bench"};
  const auto args = compareArgs(run);
  cmd.insert(cmd.end(), args.begin(), args.end());
  return cmd;
}

std::string expandEnvRefs(const std::string& text, const Settings& env) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$' || i + 1 == text.size()) {
      out += text[i];
    } else if (text[i + 1] == '$') {
      out += '$';
      ++i;
    } else if (const auto close = text.find(')', i);
               text[i + 1] == '(' && close != std::string::npos) {
      const std::string name = text.substr(i + 2, close - i - 2);
      std::string value = text.substr(i, close - i + 1);
      for (const auto& [k, v] : env) {
        if (k == name) value = v;
      }
      out += value;
      i = close;
    } else {
      out += text[i];
    }
  }
  return out;
}

namespace {

std::vector<std::string> expandAll(const std::vector<std::string>& words, const Settings& env) {
  std::vector<std::string> out;
  for (const auto& w : words) out.push_back(expandEnvRefs(w, env));
  return out;
}

}  // namespace

std::vector<std::string> podArgv(const KubeRun& run, std::uint32_t index) {
  Settings env = runSettings(run);
  env.emplace_back(kIndexEnv, std::to_string(index));
  std::vector<std::string> argv{"nfsrdma-bench"};
  const auto args = expandAll(compareArgs(run), env);
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::vector<std::string> launcherArgv(const KubeRun& run) {
  return expandAll(launcherCommand(run), runSettings(run));
}

}  // namespace nfsrdma::bench::kube
