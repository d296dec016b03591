// Runs nfsrdma-server in-process and captures its streams; finds text in them.
#pragma once

#include <gtest/gtest.h>

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

// Where `what` is in `text`; a test failure (and npos) when it is not.
inline std::size_t pos(const std::string& text, const std::string& what) {
  auto p = text.find(what);
  EXPECT_NE(p, std::string::npos) << "missing '" << what << "' in:\n" << text;
  return p;
}

}  // namespace nfsrdma::server::testing
