#include "tests/integration/bench/ShellRun.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>

namespace nfsrdma::bench {

ScratchDir::ScratchDir(const std::string& prefix)
    : path(std::filesystem::temp_directory_path() / (prefix + "-" + std::to_string(::getpid()))) {
  std::filesystem::create_directories(path);
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

std::string mpirunRanks(int ranks) {
  return "mpirun --allow-run-as-root --oversubscribe --bind-to none --mca pml ob1 --mca btl "
         "self,vader --mca btl_vader_single_copy_mechanism none -np " +
         std::to_string(ranks);
}

std::string shellQuoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

Ran runShell(const std::string& cmd, int timeoutSeconds) {
  Ran r;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string line =
      "timeout " + std::to_string(timeoutSeconds) + " bash -c " + shellQuoted(cmd) + " 2>&1";
  FILE* f = ::popen(line.c_str(), "r");
  if (f == nullptr) return r;
  std::array<char, 4096> buf{};
  for (std::size_t n = 0; (n = std::fread(buf.data(), 1, buf.size(), f)) > 0;)
    r.out.append(buf.data(), n);
  const int status = ::pclose(f);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace nfsrdma::bench
