// `nfsrdma-bench kube`: renders an N-rank run of `compare` on Kubernetes
// (KubeManifest.h) to stdout, for `| kubectl apply -f -`, or with --out into
// a directory of one file per object. Nothing talks to a cluster: the
// command only checks its options and writes YAML.
#include <boost/program_options.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "bench/BenchCommands.h"
#include "bench/job/WorkloadOptions.h"
#include "bench/kube/KubeManifest.h"
#include "bench/kube/KubeRun.h"
#include "util/ToolCli.h"

namespace po = boost::program_options;

namespace nfsrdma::bench {
namespace {

using kube::KubeArgs;

struct KubeCommandArgs {
  KubeArgs run;
  std::string outDir;
};

void addRunOptions(po::options_description& opts, KubeArgs& a) {
  opts.add_options()("clients", po::value(&a.clients)->required(),
                     "ranks: pods, one rank each, one per node (required)")(
      "image", po::value(&a.image),
      "the image of configs/kube/Containerfile, as the cluster pulls it (required)")(
      "name", po::value(&a.name)->default_value(a.name),
      "the Job's name, prefix of every object's")("namespace", po::value(&a.ns),
                                                  "the objects' namespace (default: kubectl's)")(
      "target", po::value(&a.targets)->composing(),
      "NAME=ENGINE:LOCATION, repeatable: nfs-tcp=nfs:nfs://srv/export, "
      "nfs-rdma=nfs:nfs://srv:20049/export?proto=rdma, libnfs=libnfs:nfs://srv/export "
      "({rank} in a URL is each rank's index)")(
      "volume", po::value(&a.volumes)->composing(),
      "NAME=rwx:STORAGECLASS[:SIZE] (one ReadWriteMany claim every pod mounts) or "
      "NAME=ephemeral:STORAGECLASS[:SIZE] (a claim per pod, e.g. local-path); repeatable; "
      "mounted at /mnt/NAME, measured as target NAME=path:/mnt/NAME");
}

// The workload is compare's, declared once for both (bench/job/WorkloadOptions.h).
void addWorkloadOptions(po::options_description& opts, KubeArgs& a) {
  addProfilesOption(opts, a.profiles);
  addRuntimeOption(opts, a.runtime);
  addRampOption(opts, a.ramp);
  addSizeOption(opts, a.size);
  addIodepthOption(opts, a.iodepth);
  addNumjobsOption(opts, a.numjobs);
  addVerifyOption(opts, a.verify);
}

void addPodOptions(po::options_description& opts, KubeArgs& a) {
  opts.add_options()(
      "rdma", po::value(&a.rdmaResource)->implicit_value(std::string(kube::kDefaultRdmaResource)),
      "--rdma [RESOURCE]: request the device plugin's RDMA resource (default "
      "rdma/rdma_shared_device_a) and CAP_IPC_LOCK")(
      "host-network", po::bool_switch(&a.hostNetwork),
      "pods on the node's network (its netdevs and RoCE GIDs)")(
      "start-in", po::value(&a.startIn)->default_value(a.startIn),
      "seconds from now to the first cell, a clock time written into the manifest")(
      "cell-slot", po::value(&a.cellSlot)->default_value(a.cellSlot),
      "seconds from one cell's start to the next's (0: ramp + runtime + 60)")(
      "mpi-operator", po::bool_switch(&a.mpiOperator),
      "a Kubeflow MPIJob (kubeflow.org/v2beta1) instead: the ranks start at MPI's barrier");
}

po::options_description kubeOptions(KubeCommandArgs& a) {
  po::options_description opts("nfsrdma-bench kube options");
  opts.add_options()("help,h", "show this help")(
      "out", po::value(&a.outDir), "write one file per object into this new or empty directory");
  addRunOptions(opts, a.run);
  addWorkloadOptions(opts, a.run);
  addPodOptions(opts, a.run);
  return opts;
}

// Boost drops words that are no option when no positional option is
// declared: `kube 4 --image ...` would silently render something else.
void parseKubeArgs(int argc, char** argv, const po::options_description& opts,
                   po::variables_map& vm) {
  po::options_description all;
  all.add(opts);
  all.add_options()("nfsrdma-stray-argument", po::value<std::vector<std::string>>());
  po::positional_options_description stray;
  stray.add("nfsrdma-stray-argument", -1);
  tool::parseOrUsageError([&] {
    po::store(po::command_line_parser(argc, argv).options(all).positional(stray).run(), vm);
  });
  if (vm.count("help") != 0) return;
  if (vm.count("nfsrdma-stray-argument") != 0) {
    const std::string word = vm["nfsrdma-stray-argument"].as<std::vector<std::string>>().front();
    throw tool::UsageError("unexpected argument '" + word +
                           "': every setting is an option (see --help)");
  }
  tool::parseOrUsageError([&] { po::notify(vm); });
}

void writeDirectory(const std::string& dir, const std::vector<kube::KubeDocument>& docs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("--out " + dir + ": cannot create it: " + ec.message());
  if (!fs::is_empty(dir, ec) || ec) {
    throw std::runtime_error("--out " + dir +
                             ": not empty; give a new or empty directory (kubectl apply -f DIR "
                             "would also apply the files already there)");
  }
  for (const auto& d : docs) {
    const fs::path path = fs::path(dir) / d.file;
    std::ofstream out(path);
    out << d.yaml;
    out.close();
    if (!out) throw std::runtime_error("cannot write " + path.string());
  }
}

int runKubeSteps(int argc, char** argv) {
  KubeCommandArgs a;
  const po::options_description opts = kubeOptions(a);
  po::variables_map vm;
  parseKubeArgs(argc, argv, opts, vm);
  if (vm.count("help") != 0) {
    std::cout << "usage: nfsrdma-bench kube --clients N --image IMAGE [options]\n" << opts;
    return tool::kExitSuccess;
  }
  a.run.startInGiven = !vm["start-in"].defaulted() || !vm["cell-slot"].defaulted();
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  const kube::KubeRun run = kube::planKubeRun(a.run, now);
  if (a.outDir.empty()) {
    std::cout << kube::renderKubeStream(run) << std::flush;
    if (!std::cout) throw std::runtime_error("cannot write the manifest to stdout");
  } else {
    const auto docs = kube::renderKubeDocuments(run);
    writeDirectory(a.outDir, docs);
    std::cout << "wrote " << docs.size() << " files to " << a.outDir << "; kubectl apply -f "
              << a.outDir << "\n";
  }
  if (!run.mpiOperator) {
    std::cerr << "nfsrdma-bench kube: the first cell starts at " << kube::utcTime(run.startAt)
              << " (in " << run.startAt - now << " s): apply the manifest before then\n";
  }
  return tool::kExitSuccess;
}

}  // namespace

int runKubeCommand(int argc, char** argv) {
  return tool::runReportingErrors("nfsrdma-bench kube", std::cerr,
                                  [&] { return runKubeSteps(argc, argv); });
}

}  // namespace nfsrdma::bench
