// Placeholder until the anchor command lands.
#include <cstdio>

#include "bench/BenchCommands.h"

namespace nfsrdma::bench {

int runAnchorCommand(int, char**) {
  std::fprintf(stderr, "nfsrdma-bench: 'anchor' is not implemented yet\n");
  return 2;
}

}  // namespace nfsrdma::bench
