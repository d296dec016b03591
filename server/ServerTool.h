// ServerTool: the nfsrdma-server command line (doctor, plan, apply, status,
// rollback, serve) as a library function, so tests drive exactly what users
// run, in-process, against a --root tree, and main.cpp stays one line.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace nfsrdma::server {

// args excludes the program name. Returns the exit status: 0 success,
// 1 failure (including doctor FAILs), 2 usage error. Never throws.
int runServerTool(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace nfsrdma::server
