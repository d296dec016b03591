// GaneshaServer: nfs-ganesha run as a child process, the embedded userspace
// NFS server used where no kernel NFS server exists (tests, the bench quick
// start, `nfsrdma-server serve`). It owns everything it creates: a rendered
// ganesha.conf, pid file, log and NFSv4 recovery state all live in one work
// directory, so several servers can run side by side and nothing outside that
// directory is written (GaneshaWorkDir.h); what it serves and the config
// rendered from it are in GaneshaConfig.h. Readiness is observed (the log line
// ganesha prints once its listeners are up, then a TCP connect), never guessed
// by sleeping, and a server whose log reports a configuration error is not
// ready: ganesha drops what it cannot read and serves the rest.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "server/ganesha/GaneshaConfig.h"
#include "server/ganesha/GaneshaWorkDir.h"

namespace nfsrdma::server {

// True when the installed ganesha library knows the NFS_RDMA_Port key (the
// Debian build does not: it has 9P/RDMA only). Looked up in the binary, not
// assumed from the version.
bool ganeshaSupportsNfsRdma();

class GaneshaServer {  // move-only; destructor stops the server, never throws
 public:
  // The child gets PR_SET_PDEATHSIG(SIGTERM), tied to the calling thread:
  // call start() from a thread that outlives the server (the main thread in
  // the tools and tests), or ganesha is stopped when that thread exits.
  // Validates `opts`, removes work directories ended runs left (and says so
  // through opts.notice), writes the config into the work directory, runs
  // `ganesha.nfsd -F` and returns once the log says "NFS SERVER INITIALIZED"
  // and a TCP connect to the port succeeds, within opts.startTimeout, with no
  // configuration error in the log. Throws std::runtime_error naming the
  // cause (bad export, ganesha missing, a work directory that is not new or
  // empty, early exit with its status, timeout) and the last lines of the
  // log, or the configuration errors ganesha logged, quoted.
  static GaneshaServer start(const GaneshaOptions& opts);

  // nullopt when ganesha.nfsd and the VFS FSAL are installed and we may run
  // them (root: the VFS FSAL needs open_by_handle_at); otherwise why not.
  static std::optional<std::string> unavailableReason();

  GaneshaServer(GaneshaServer&& other) noexcept;
  GaneshaServer& operator=(GaneshaServer&& other) noexcept;
  GaneshaServer(const GaneshaServer&) = delete;
  GaneshaServer& operator=(const GaneshaServer&) = delete;
  ~GaneshaServer();

  uint16_t port() const { return port_; }
  const std::string& address() const { return address_; }
  pid_t pid() const { return pid_; }  // 0 once stopped
  const std::filesystem::path& logPath() const { return logPath_; }
  const std::filesystem::path& workDir() const { return dir_.path; }
  const std::filesystem::path& configPath() const { return configPath_; }
  bool running() const { return pid_ > 0; }

  // SIGTERM, a bounded wait (10 s), then SIGKILL; reaps the child and removes
  // a temporary work directory. Idempotent; never throws.
  void stop() noexcept;

  // Blocks until the child exits on its own or `stopRequested` becomes true
  // (checked every `poll`); returns the child's wait status, or -1 when it
  // was asked to stop (then call stop()). Used by `nfsrdma-server serve`.
  int waitUntilExitOr(const volatile std::sig_atomic_t& stopRequested,
                      std::chrono::milliseconds poll = std::chrono::milliseconds(100));

 private:
  GaneshaServer() = default;
  // start()'s steps: the work directory (and the config and log paths in
  // it), its files made afresh before each attempt (the config written), the
  // error when none worked (with the log's last lines when `withLogTail`).
  void useWorkDir(const std::filesystem::path& requested);
  void prepareAttempt(const std::string& config) const;
  [[noreturn]] void failStart(const std::string& why, bool withLogTail);
  void release() noexcept;
  void killChild() noexcept;  // stop() without removing the work directory

  pid_t pid_ = 0;
  uint16_t port_ = 0;
  std::string address_;
  GaneshaWorkDir dir_;  // dir_.temporary: ours to remove on stop
  std::filesystem::path logPath_;
  std::filesystem::path configPath_;
};

// The last `maxLines` lines of a text file ("" when unreadable); used in
// error messages so a failed start explains itself.
std::string tailOfFile(const std::filesystem::path& file, std::size_t maxLines);

}  // namespace nfsrdma::server
