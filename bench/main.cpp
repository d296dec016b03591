// nfsrdma-bench: link and file benchmarks. Dispatches on the subcommand.
#include <iostream>

#include "bench/BenchCommands.h"
#include "util/ToolCli.h"

namespace {

using nfsrdma::tool::CommandMain;
using nfsrdma::tool::Subcommand;

constexpr Subcommand<CommandMain> kCommands[] = {
    {"devices", "", "list RDMA devices, ports, GIDs with their IPs and netdevs, link speed",
     nfsrdma::bench::runDevicesCommand},
    {"link", "", "RDMA WRITE/READ bandwidth, SEND latency and TCP bandwidth between two hosts",
     nfsrdma::bench::runLinkCommand},
    {"anchor", "", "our NFSv4.1 client vs libnfs on the same server (4 KiB QD32, 1 MiB QD8 reads)",
     nfsrdma::bench::runAnchorCommand},
    {"file", "",
     "one file profile (4k-randread, 128k-write, randrw, ...) on nfs, libnfs or a path, fio-style",
     nfsrdma::bench::runFileCommand},
    {"compare", "",
     "the side-by-side table: profiles x targets (local disk, NFS/TCP, libnfs, NFS/RDMA)",
     nfsrdma::bench::runCompareCommand},
    {"aggregate", "",
     "add up many clients' result lines (Kubernetes pods' logs): aggregate, per-client rows",
     nfsrdma::bench::runAggregateCommand},
    {"kube", "", "an N-client compare run as Kubernetes YAML (Indexed Job or MPIJob)",
     nfsrdma::bench::runKubeCommand},
    {"tune", "",
     "the settings that make a workload fast, found by alternated runs, explained, handed over",
     nfsrdma::bench::runTuneCommand},
};

const nfsrdma::tool::Tool kTool{
    "nfsrdma-bench", "nfsrdma-bench <command> [options]", kCommands, 10,
    "\n'nfsrdma-bench <command> --help' shows a command's options;\n"
    "'nfsrdma-bench --version' the version and commit of this build.\n"};

}  // namespace

int main(int argc, char** argv) {
  return nfsrdma::tool::dispatch(kTool, argc, argv, std::cout, std::cerr);
}
