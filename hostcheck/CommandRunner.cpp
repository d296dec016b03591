// CommandRunner: bounded child processes with captured output.
#include "hostcheck/CommandRunner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>

#include "util/ErrnoText.h"
#include "util/UniqueFd.h"

namespace nfsrdma::hostcheck {

std::string shellJoin(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    bool plain = !a.empty() && a.find_first_of(" \t\"'$\\*?;&|<>()") == std::string::npos;
    out += (out.empty() ? "" : " ") + (plain ? a : "'" + a + "'");
  }
  return out;
}

CommandResult SystemCommandRunner::run(const std::vector<std::string>& argv) {
  CommandResult result;
  if (argv.empty()) return {127, "empty command"};
  int pipeFds[2];
  if (::pipe2(pipeFds, O_CLOEXEC) != 0)
    return {127, std::string("pipe: ") + util::errnoText(errno)};
  UniqueFd readEnd(pipeFds[0]);
  UniqueFd writeEnd(pipeFds[1]);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    return {127, std::string("fork: ") + util::errnoText(errno)};
  }
  if (pid == 0) {
    ::dup2(writeEnd.get(), 1);
    ::dup2(writeEnd.get(), 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  writeEnd.reset();  // EOF on readEnd once the child exits
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  bool timedOut = false;
  std::array<char, 4096> buf{};
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timedOut = true;
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd pfd{readEnd.get(), POLLIN, 0};
    int pr = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) continue;
    ssize_t n = ::read(readEnd.get(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (result.output.size() < (1u << 20))
      result.output.append(buf.data(), static_cast<std::size_t>(n));
  }
  readEnd.reset();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timedOut) {
    result.exitStatus = 124;
    result.output += "\n(killed after " + std::to_string(timeout_.count()) + " s)";
  } else if (WIFEXITED(status)) {
    result.exitStatus = WEXITSTATUS(status);
  } else {
    result.exitStatus = 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  }
  return result;
}

}  // namespace nfsrdma::hostcheck
