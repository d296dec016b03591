// Placeholder until the link command lands.
#include <cstdio>

#include "bench/BenchCommands.h"

namespace nfsrdma::bench {

int runLinkCommand(int, char**) {
  std::fprintf(stderr, "nfsrdma-bench: 'link' is not implemented yet\n");
  return 2;
}

}  // namespace nfsrdma::bench
