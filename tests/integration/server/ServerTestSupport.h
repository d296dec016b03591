// Helpers shared by the server integration tests (GaneshaServerTest and
// ServeCommandTest): the NFSRDMA_REQUIRE_REAL switch, a temporary directory
// removed at the end, and a bounded shell command.
#pragma once

#include <stdlib.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace nfsrdma::testing {

// CI sets NFSRDMA_REQUIRE_REAL=1: a missing real server then fails instead of skipping.
inline bool requireReal() {
  const char* v = std::getenv("NFSRDMA_REQUIRE_REAL");
  return v != nullptr && std::string(v) == "1";
}

// A fresh directory under the temp dir, named prefix-XXXXXX, removed at the end of the test.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& prefix = "nfsrdma-gtest") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path = tmpl;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// Runs a shell command (bounded by coreutils' timeout), returns stdout and stderr.
inline std::string run(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = ::popen(("timeout 30 " + cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  std::array<char, 4096> buf{};
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;) out.append(buf.data(), n);
  *status = ::pclose(p);
  return out;
}

}  // namespace nfsrdma::testing
