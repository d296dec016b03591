// Placeholder until the devices command lands.
#include <cstdio>

#include "bench/BenchCommands.h"

namespace nfsrdma::bench {

int runDevicesCommand(int, char**) {
  std::fprintf(stderr, "nfsrdma-bench: 'devices' is not implemented yet\n");
  return 2;
}

}  // namespace nfsrdma::bench
