// Helpers shared by the server integration tests: the NFSRDMA_REQUIRE_REAL
// switch, a temporary directory removed at the end, a bounded shell command,
// a tool run as a child with its output on a pipe, and a private /etc for
// such a child (its own mount namespace).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "server/ganesha/GaneshaServer.h"

namespace nfsrdma::testing {

// CI sets NFSRDMA_REQUIRE_REAL=1: a missing real server then fails instead of skipping.
inline bool requireReal() {
  const char* v = std::getenv("NFSRDMA_REQUIRE_REAL");
  return v != nullptr && std::string(v) == "1";
}

// Without ganesha (or root for its VFS FSAL) a test skips with the reason, or
// fails when NFSRDMA_REQUIRE_REAL=1.
#define NFSRDMA_REQUIRE_SERVE()                                                             \
  do {                                                                                      \
    if (auto why = nfsrdma::server::GaneshaServer::unavailableReason()) {                   \
      if (nfsrdma::testing::requireReal()) FAIL() << "NFSRDMA_REQUIRE_REAL=1 but " << *why; \
      GTEST_SKIP() << *why;                                                                 \
    }                                                                                       \
  } while (false)

// A file's contents ("" when it cannot be read).
inline std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
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
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;)
    out.append(buf.data(), n);
  *status = ::pclose(p);
  return out;
}

// The tool as a child with its stdout and stderr on one pipe. `inChild`
// runs in the child before exec; what it returns, when not empty, is
// printed and the child exits 125.
struct Child {
  pid_t pid = -1;
  int outFd = -1;
  std::string output;

  explicit Child(const std::vector<std::string>& argv,
                 const std::function<std::string()>& inChild = {}) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid = ::fork();
    if (pid == 0) {
      ::dup2(fds[1], 1);
      ::dup2(fds[1], 2);
      if (inChild) {
        if (const std::string why = inChild(); !why.empty()) {
          const std::string line = "child setup: " + why + "\n";
          (void)!::write(2, line.data(), line.size());
          ::_exit(125);
        }
      }
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    outFd = fds[0];
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    if (outFd >= 0) ::close(outFd);
  }
  // Reads output until `marker` appears, EOF, or `limit` passes.
  bool readUntil(const std::string& marker, std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    std::array<char, 4096> buf{};
    while (output.find(marker) == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd pfd{outFd, POLLIN, 0};
      if (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) continue;
      ssize_t n = ::read(outFd, buf.data(), buf.size());
      if (n <= 0) return output.find(marker) != std::string::npos;
      output.append(buf.data(), static_cast<std::size_t>(n));
    }
    return true;
  }
  // Waits (bounded) for the exit status; -1 on timeout.
  int waitExit(std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        readUntil("\x01", std::chrono::seconds(5));  // the rest, up to EOF
        return status;
      }
      readUntil("\x01", std::chrono::seconds(0));  // drain without blocking
      pollfd pfd{outFd, POLLIN, 0};
      ::poll(&pfd, 1, 50);
    }
    return -1;
  }
};

// /etc as a child sees it in a mount namespace of its own: the host's /etc
// with an overlay of the files given (hosts, nsswitch.conf, netgroup), so
// that name, wildcard and netgroup lookups have fixed answers. The host's
// /etc is never changed.
class PrivateEtc {
 public:
  explicit PrivateEtc(const std::map<std::string, std::string>& files) {
    std::filesystem::create_directories(dir_.path / "upper");
    std::filesystem::create_directories(dir_.path / "work");
    for (const auto& [name, text] : files) std::ofstream(dir_.path / "upper" / name) << text;
    options_ = "lowerdir=/etc,upperdir=" + (dir_.path / "upper").string() +
               ",workdir=" + (dir_.path / "work").string();
  }
  // In the child, before exec: "" when /etc is the overlay, else why not.
  std::string enter() const {
    if (::unshare(CLONE_NEWNS) != 0)
      return std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno);
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
      return std::string("making / private: ") + std::strerror(errno);
    if (::mount("overlay", "/etc", "overlay", 0, options_.c_str()) != 0)
      return std::string("overlay on /etc: ") + std::strerror(errno);
    return "";
  }

 private:
  TempDir dir_{"nfsrdma-etc"};
  std::string options_;
};

}  // namespace nfsrdma::testing
