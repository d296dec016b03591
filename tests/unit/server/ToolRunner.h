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

// text with the first `from` replaced by `to`; a test failure (and text
// unchanged) when there is no `from`.
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto p = text.find(from);
  EXPECT_NE(p, std::string::npos) << "no '" << from << "' in:\n" << text;
  if (p != std::string::npos) text.replace(p, from.size(), to);
  return text;
}

// Where `what` is in `text`; a test failure (and npos) when it is not.
inline std::size_t pos(const std::string& text, const std::string& what) {
  auto p = text.find(what);
  EXPECT_NE(p, std::string::npos) << "missing '" << what << "' in:\n" << text;
  return p;
}

}  // namespace nfsrdma::server::testing
