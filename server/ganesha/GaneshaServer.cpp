// GaneshaServer: starts nfs-ganesha as a supervised child and proves it is
// serving before returning. Why a child process and not the library: ganesha
// keeps global state (one config, one pseudo fs, signal handlers), so one
// process per server is the only way to run several side by side in tests.
// Why fork+exec rather than posix_spawn: the child must set PR_SET_PDEATHSIG
// (a crashed test must not leave ganesha behind), reset the signal mask
// (`serve` blocks SIGINT/SIGTERM to wait for them) and get its own process
// group (a terminal's Ctrl-C goes to us, and we stop ganesha in order).
#include "server/ganesha/GaneshaServer.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "util/ErrnoText.h"
#include "util/SocketAddress.h"
#include "util/TcpConnect.h"
#include "util/UniqueFd.h"

namespace nfsrdma::server {
namespace fs = std::filesystem;
namespace {

using util::errnoText;

constexpr const char* kReadyLine = "NFS SERVER INITIALIZED";
constexpr const char* kConfigFile = kGaneshaConfigFileName;
constexpr const char* kLogFile = kGaneshaLogFileName;
constexpr const char* kStdoutFile = kGaneshaStdoutFileName;
constexpr std::size_t kMaxConfigErrorsQuoted = 20;
constexpr std::chrono::milliseconds kPollInterval{20};
constexpr std::chrono::seconds kStopGrace{10};
constexpr std::chrono::seconds kKillGrace{5};
constexpr int kFreePortAttempts = 3;

// Directories where distributions install ganesha's FSAL plugins.
constexpr std::array<const char*, 4> kPluginDirs = {"/usr/lib/x86_64-linux-gnu/ganesha",
                                                    "/usr/lib/aarch64-linux-gnu/ganesha",
                                                    "/usr/lib64/ganesha", "/usr/lib/ganesha"};

std::optional<fs::path> findExecutable(const std::string& name) {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string dir; std::getline(ss, dir, ':');) {
      if (!dir.empty()) dirs.push_back(dir);
    }
  }
  for (const char* dir : {"/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"}) {
    dirs.emplace_back(dir);
  }
  for (const auto& dir : dirs) {
    fs::path candidate = fs::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

std::optional<fs::path> findVfsFsal() {
  for (const char* dir : kPluginDirs) {
    fs::path candidate = fs::path(dir) / "libfsalvfs.so";
    std::error_code ec;
    if (fs::exists(candidate, ec)) return candidate;
  }
  return std::nullopt;
}

// True when `file` contains `needle` (streamed in chunks with an overlap, so
// a needle across a chunk boundary is still found).
bool fileContainsBytes(const fs::path& file, const std::string& needle) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  std::string carry;
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    std::string window = carry + std::string(buf.data(), got);
    if (window.find(needle) != std::string::npos) return true;
    std::size_t keep = std::min(window.size(), needle.size());
    carry = window.substr(window.size() - keep);
  }
  return false;
}

// Asks the kernel for a port that is free right now on `address`. Another
// process may take it before ganesha binds; start() retries on that.
uint16_t pickFreePort(const std::string& address) {
  auto addr = util::parseNumericAddress(address, 0, false);
  if (!addr)
    throw std::runtime_error("bind address '" + address + "' is not a numeric IPv4/IPv6 address");
  UniqueFd fd(::socket(addr->family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) throw std::runtime_error("socket() for a free port: " + errnoText(errno));
  if (::bind(fd.get(), addr->get(), addr->length) != 0) {
    throw std::runtime_error("cannot bind " + address +
                             ":0 to find a free port: " + errnoText(errno));
  }
  util::SocketAddress bound;
  bound.length = sizeof bound.storage;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound.storage), &bound.length) != 0) {
    throw std::runtime_error("getsockname() for a free port: " + errnoText(errno));
  }
  return bound.port();
}

// A fixed port someone already listens on: said in one line before ganesha
// starts (it would log a page of DBUS and bind errors and exit).
void requirePortFree(const std::string& address, uint16_t port) {
  auto addr = util::parseNumericAddress(address, port, false);
  if (!addr)
    throw std::runtime_error("bind address '" + address + "' is not a numeric IPv4/IPv6 address");
  UniqueFd fd(::socket(addr->family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return;  // no verdict; ganesha reports its own failure
  const int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one,
               sizeof one);  // as servers bind: TIME_WAIT is no obstacle
  if (::bind(fd.get(), addr->get(), addr->length) != 0 && errno == EADDRINUSE) {
    throw std::runtime_error(
        "cannot start nfs-ganesha: port " + std::to_string(port) + " on " + address +
        " is already in use (another NFS server?); choose another port, or 0 for a free one");
  }
}

// One connect attempt, bounded by `timeout`.
bool tcpConnects(const std::string& address, uint16_t port, std::chrono::milliseconds timeout) {
  auto addr = util::parseNumericAddress(address, port, true);
  if (!addr) return false;
  UniqueFd fd(::socket(addr->family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  return fd && util::connectWithin(fd.get(), *addr, timeout) == 0;
}

std::string describeWaitStatus(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("signal ") + ::strsignal(WTERMSIG(status));
  return "wait status " + std::to_string(status);
}

// Waits up to `limit` for `pid` to exit; true (and *status set) when it did
// or when it was already reaped elsewhere (ECHILD).
bool waitForExit(pid_t pid, std::chrono::milliseconds limit, int* status) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  const auto maxRounds = limit / kPollInterval + 2;
  for (long round = 0; round < maxRounds; ++round) {
    pid_t r = ::waitpid(pid, status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno == ECHILD) {
      *status = 0;
      return true;
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(kPollInterval);
  }
  return false;
}

// Everything the child needs, prepared before fork(): after fork only
// async-signal-safe calls are allowed.
struct ExecPlan {
  std::vector<std::string> args;
  int stdoutFd = -1;  // ganesha.stdout, made without following a link
};

pid_t spawnGanesha(const ExecPlan& plan) {
  std::vector<char*> argv;
  for (const auto& a : plan.args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork() for ganesha.nfsd: " + errnoText(errno));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);
    ::setpgid(0, 0);
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGHUP, SIG_DFL);
    ::signal(SIGPIPE, SIG_DFL);
    int in = ::open("/dev/null", O_RDONLY);
    if (in < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(plan.stdoutFd, 1);
    ::dup2(plan.stdoutFd, 2);
    ::syscall(SYS_close_range, 3U, ~0U, 0U);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

}  // namespace

std::string tailOfFile(const fs::path& file, std::size_t maxLines) {
  std::ifstream in(file);
  if (!in) return "";
  std::vector<std::string> ring;
  for (std::string line; std::getline(in, line);) {
    ring.push_back(std::move(line));
    if (ring.size() > maxLines) ring.erase(ring.begin());
  }
  std::string out;
  for (const auto& l : ring) out += l + "\n";
  return out;
}

bool ganeshaSupportsNfsRdma() {
  // The option table lives in libganesha_nfsd (Debian) or in the daemon
  // itself (static builds); a build without NFS/RDMA has no such key.
  std::vector<fs::path> candidates;
  if (auto exe = findExecutable("ganesha.nfsd")) candidates.push_back(*exe);
  for (const char* dir :
       {"/usr/lib/ganesha", "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"}) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path().filename().string().rfind("libganesha_nfsd.so", 0) == 0)
        candidates.push_back(it->path());
    }
  }
  for (const auto& c : candidates) {
    if (fileContainsBytes(c, "NFS_RDMA_Port")) return true;
  }
  return false;
}

std::optional<std::string> GaneshaServer::unavailableReason() {
  if (!findExecutable("ganesha.nfsd")) {
    return std::string(
        "ganesha.nfsd not found in PATH or /usr/bin, /usr/sbin (apt-get install nfs-ganesha)");
  }
  if (!findVfsFsal()) {
    std::string dirs;
    for (const char* d : kPluginDirs) dirs += std::string(dirs.empty() ? "" : ", ") + d;
    return "ganesha's VFS FSAL (libfsalvfs.so) not found in " + dirs +
           " (apt-get install nfs-ganesha-vfs)";
  }
  if (::geteuid() != 0) {
    return std::string(
        "ganesha's VFS FSAL needs root (open_by_handle_at requires CAP_DAC_READ_SEARCH)");
  }
  return std::nullopt;
}

namespace {

// What start() can check before it creates anything.
void requireStartable(const GaneshaOptions& opts) {
  if (auto why = GaneshaServer::unavailableReason())
    throw std::runtime_error("cannot start nfs-ganesha: " + *why);
  if (opts.rdmaPort != 0 && !ganeshaSupportsNfsRdma()) {
    throw std::runtime_error(
        "cannot start nfs-ganesha with RDMA port " + std::to_string(opts.rdmaPort) +
        ": the installed build has no NFS/RDMA support (no NFS_RDMA_Port key)");
  }
  if (opts.startTimeout.count() <= 0)
    throw std::runtime_error("ganesha: start timeout must be positive");
  if (opts.port != 0) requirePortFree(opts.bindAddress, opts.port);
}

// `optsIn` with every export path an existing directory, made canonical.
GaneshaOptions withCanonicalExportPaths(const GaneshaOptions& optsIn) {
  GaneshaOptions opts = optsIn;
  for (auto& e : opts.exports) {
    std::error_code ec;
    if (!fs::is_directory(e.path, ec)) {
      throw std::runtime_error("ganesha export '" + e.path.string() +
                               "': not an existing directory");
    }
    e.path = fs::canonical(e.path, ec);
    if (ec) throw std::runtime_error("ganesha export '" + e.path.string() + "': " + ec.message());
  }
  return opts;
}

// How one ganesha.nfsd process came up: ready, exited (with its wait
// status) or neither within the timeout (logReady: the log line was seen).
struct Readiness {
  bool ready = false;
  std::optional<int> exitStatus;
  bool logReady = false;
};

Readiness awaitReady(pid_t pid, const fs::path& logPath, const GaneshaOptions& opts,
                     uint16_t port) {
  Readiness r;
  const auto deadline = std::chrono::steady_clock::now() + opts.startTimeout;
  const auto maxRounds = opts.startTimeout / kPollInterval + 2;
  for (long round = 0; round < maxRounds; ++round) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      r.exitStatus = status;
      return r;
    }
    if (!r.logReady) r.logReady = fileContainsBytes(logPath, kReadyLine);
    if (r.logReady && tcpConnects(opts.bindAddress, port, std::chrono::milliseconds(500))) {
      r.ready = true;
      return r;
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(kPollInterval);
  }
  return r;
}

std::string notReadyError(const GaneshaOptions& opts, uint16_t port, bool logReady) {
  return "ganesha.nfsd did not become ready within " + std::to_string(opts.startTimeout.count()) +
         " s (" + (logReady ? "log says initialized but TCP connect to " : "no '") +
         (logReady ? opts.bindAddress + ":" + std::to_string(port) + " failed)"
                   : std::string(kReadyLine) + "' in the log)");
}

// Whether ganesha exited because another process took the free port we
// picked for it.
bool lostPortRace(const fs::path& logPath) {
  const std::string log = tailOfFile(logPath, 400);
  return log.find("Address already in use") != std::string::npos ||
         log.find("Cannot bind") != std::string::npos;
}

// ganesha's own report of errors in its configuration, as the log lines
// say it: each line of config_errs_to_log (at any level: a client name that
// does not resolve is a WARN there) and each CONFIG line at CRIT, MAJ or FATAL
// (ganesha_yyerror, client_commit, fsal_cfg_commit). ganesha drops what they
// name and serves the rest.
std::vector<std::string> configErrors(const fs::path& logPath) {
  std::ifstream in(logPath);
  std::vector<std::string> found;
  for (std::string line; std::getline(in, line);) {
    const bool reported = line.find("config_errs_to_log :CONFIG :") != std::string::npos;
    const bool severe = line.find(":CONFIG :CRIT :") != std::string::npos ||
                        line.find(":CONFIG :MAJ :") != std::string::npos ||
                        line.find(":CONFIG :FATAL :") != std::string::npos;
    if (reported || severe) found.push_back(line);
  }
  return found;
}

std::string configErrorsMessage(const std::vector<std::string>& errors) {
  std::string msg =
      "nfs-ganesha reported errors in the configuration it was given and would serve without what "
      "they name:";
  for (std::size_t i = 0; i < errors.size() && i < kMaxConfigErrorsQuoted; ++i)
    msg += "\n" + errors[i];
  if (errors.size() > kMaxConfigErrorsQuoted)
    msg += "\n(" + std::to_string(errors.size() - kMaxConfigErrorsQuoted) + " more in the log)";
  return msg;
}

// Removes the work directories ended runs left in the temp directory and
// says so in one line, through opts.notice or on standard error.
void sweepLeftovers(const GaneshaOptions& opts) {
  std::error_code ec;
  const fs::path tmp = fs::temp_directory_path(ec);
  if (ec) return;
  const std::string line = sweepEndedGaneshaWorkDirs(tmp);
  if (line.empty()) return;
  if (opts.notice) {
    opts.notice(line);
  } else {
    std::cerr << line << "\n" << std::flush;
  }
}

}  // namespace

GaneshaServer GaneshaServer::start(const GaneshaOptions& optsIn) {
  requireStartable(optsIn);
  const GaneshaOptions opts = withCanonicalExportPaths(optsIn);
  // Every refusal of the config (a client name that does not resolve too)
  // before the work directory is made.
  (void)renderGaneshaConfig(
      opts, opts.port != 0 ? opts.port : 2049,
      opts.workDir.empty() ? fs::temp_directory_path() : fs::absolute(opts.workDir));
  sweepLeftovers(opts);
  GaneshaServer server;
  server.address_ = opts.bindAddress;
  server.useWorkDir(opts.workDir);
  const auto exe = findExecutable("ganesha.nfsd");
  const int attempts = opts.port == 0 ? kFreePortAttempts : 1;
  std::string lastError;
  bool withLogTail = true;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    const uint16_t port = opts.port != 0 ? opts.port : pickFreePort(opts.bindAddress);
    server.prepareAttempt(renderGaneshaConfig(opts, port, server.dir_.path));
    const UniqueFd out = makeWorkFile(server.dir_, kStdoutFile);
    ExecPlan plan{
        {exe->string(), "-F", "-L", server.logPath_.string(), "-f", server.configPath_.string(),
         "-p", (server.dir_.path / kGaneshaPidFileName).string(), "-N", "NIV_EVENT"},
        out.get()};
    server.pid_ = spawnGanesha(plan);
    server.port_ = port;
    const Readiness r = awaitReady(server.pid_, server.logPath_, opts, port);
    if (r.ready) {
      const std::vector<std::string> errors = configErrors(server.logPath_);
      if (errors.empty()) return server;
      lastError = configErrorsMessage(errors);
      withLogTail = false;  // the lines that matter are quoted
      server.killChild();
      break;
    }
    if (!r.exitStatus) {
      lastError = notReadyError(opts, port, r.logReady);
      server.killChild();
      break;
    }
    server.pid_ = 0;
    lastError = "ganesha.nfsd exited during startup (" + describeWaitStatus(*r.exitStatus) + ")";
    // only a lost race for a free port is retried
    if (!(lostPortRace(server.logPath_) && opts.port == 0)) break;
  }
  server.failStart(lastError, withLogTail);
}

void GaneshaServer::useWorkDir(const fs::path& requested) {
  dir_ = requested.empty() ? makeTemporaryGaneshaWorkDir(fs::temp_directory_path())
                           : useGivenGaneshaWorkDir(requested);
  configPath_ = dir_.path / kConfigFile;
  logPath_ = dir_.path / kLogFile;
}

void GaneshaServer::prepareAttempt(const std::string& config) const {
  makeWorkSubdir(dir_, kGaneshaRecoveryDirName);
  // Made afresh and empty: a stale "INITIALIZED" must not count, and ganesha
  // opens our files rather than wherever a link there would lead.
  (void)makeWorkFile(dir_, kLogFile);
  (void)makeWorkFile(dir_, kGaneshaPidFileName);
  writeWorkFile(dir_, kConfigFile, config);
}

void GaneshaServer::failStart(const std::string& why, bool withLogTail) {
  const std::string tail = withLogTail ? tailOfFile(logPath_, 15) : "";
  const std::string out = tailOfFile(dir_.path / kStdoutFile, 5);
  std::string msg = why;
  if (!dir_.temporary)
    msg += std::string(withLogTail ? "; " : "\n") + "config " + configPath_.string() + ", log " +
           logPath_.string();
  if (!tail.empty()) msg += "; last log lines:\n" + tail;
  if (!out.empty()) msg += (withLogTail ? "" : "\n") + std::string("stdout/stderr:\n") + out;
  stop();
  throw std::runtime_error(msg);
}

GaneshaServer::GaneshaServer(GaneshaServer&& other) noexcept
    : pid_(other.pid_),
      port_(other.port_),
      address_(std::move(other.address_)),
      dir_(std::move(other.dir_)),
      logPath_(std::move(other.logPath_)),
      configPath_(std::move(other.configPath_)) {
  other.release();
}

GaneshaServer& GaneshaServer::operator=(GaneshaServer&& other) noexcept {
  if (this != &other) {
    stop();
    pid_ = other.pid_;
    port_ = other.port_;
    address_ = std::move(other.address_);
    dir_ = std::move(other.dir_);
    logPath_ = std::move(other.logPath_);
    configPath_ = std::move(other.configPath_);
    other.release();
  }
  return *this;
}

GaneshaServer::~GaneshaServer() {
  stop();
}

void GaneshaServer::release() noexcept {
  pid_ = 0;
  dir_.temporary = false;
}

void GaneshaServer::stop() noexcept {
  killChild();
  if (dir_.temporary) {
    std::error_code ec;
    fs::remove_all(dir_.path, ec);
    dir_.temporary = false;
  }
}

void GaneshaServer::killChild() noexcept {
  if (pid_ > 0) {
    int status = 0;
    ::kill(pid_, SIGTERM);
    if (!waitForExit(pid_, kStopGrace, &status)) {
      ::kill(pid_, SIGKILL);
      waitForExit(pid_, kKillGrace, &status);
    }
    pid_ = 0;
  }
}

int GaneshaServer::waitUntilExitOr(const volatile std::sig_atomic_t& stopRequested,
                                   std::chrono::milliseconds poll) {
  // Unbounded by design (a server runs until told to stop), but each round is
  // bounded and re-checks both conditions.
  while (pid_ > 0) {
    if (stopRequested != 0) return -1;
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno == ECHILD)) {
      pid_ = 0;
      return status;
    }
    std::this_thread::sleep_for(poll);
  }
  return 0;
}

}  // namespace nfsrdma::server
