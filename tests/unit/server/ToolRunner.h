// Runs nfsrdma-server in-process and captures its streams.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "server/ServerTool.h"

namespace nfsrdma::server::testing {

struct ToolRun {
  int status = -1;
  std::string out, err;
};

inline ToolRun runTool(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  ToolRun r;
  r.status = runServerTool(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace nfsrdma::server::testing
