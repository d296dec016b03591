// Runs a bench command's entry point (e.g. runFileCommand) in this process
// with its stdout and stderr captured, for tests of what it prints and
// returns.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nfsrdma::bench::testing {

struct CommandResult {
  int rc = 0;
  std::string out, err;
};

inline CommandResult runCommand(int (*command)(int, char**), std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  CommandResult r;
  r.rc = command(static_cast<int>(argv.size()), argv.data());
  r.out = ::testing::internal::GetCapturedStdout();
  r.err = ::testing::internal::GetCapturedStderr();
  return r;
}

}  // namespace nfsrdma::bench::testing
