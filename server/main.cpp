// nfsrdma-server: see ServerTool.h; main only adapts argv.
#include <iostream>

#include "server/ServerTool.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return nfsrdma::server::runServerTool(args, std::cout, std::cerr);
}
