// nfsrdma-bench: link and file benchmarks. Dispatches on the subcommand.
#include <cstdio>
#include <cstring>
#include <string_view>

#include "bench/BenchCommands.h"

namespace {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(int, char**);
};

constexpr Command kCommands[] = {
    {"devices", "list RDMA devices, ports, GIDs with their IPs and netdevs, link speed",
     nfsrdma::bench::runDevicesCommand},
    {"link", "RDMA WRITE/READ bandwidth, SEND latency and TCP bandwidth between two hosts",
     nfsrdma::bench::runLinkCommand},
    {"anchor", "our NFSv4.1 client vs libnfs on the same server (4 KiB QD32, 1 MiB QD8 reads)",
     nfsrdma::bench::runAnchorCommand},
    {"file", "one file profile (4k-randread, 128k-write, randrw, ...) on nfs, libnfs or a path, fio-style",
     nfsrdma::bench::runFileCommand},
    {"compare", "the side-by-side table: profiles x targets (local disk, NFS/TCP, libnfs, NFS/RDMA)",
     nfsrdma::bench::runCompareCommand},
};

void usage(std::FILE* out) {
  std::fprintf(out, "usage: nfsrdma-bench <command> [options]\n\ncommands:\n");
  for (const auto& c : kCommands) std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
  std::fprintf(out, "\n'nfsrdma-bench <command> --help' shows a command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  std::string_view name = argv[1];
  if (name == "-h" || name == "--help" || name == "help") {
    usage(stdout);
    return 0;
  }
  for (const auto& c : kCommands) {
    if (name == c.name) return c.run(argc - 1, argv + 1);
  }
  std::fprintf(stderr, "nfsrdma-bench: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}
