// GaneshaServer: nfs-ganesha run as a child process, the embedded userspace
// NFS server used where no kernel NFS server exists (tests, the bench quick
// start, `nfsrdma-server serve`). It owns everything it creates: a rendered
// ganesha.conf, pid file, log and NFSv4 recovery state all live in one work
// directory, so several servers can run side by side and nothing outside that
// directory is written (GaneshaWorkDir.h). Readiness is observed (the log line
// ganesha prints once its listeners are up, then a TCP connect), never guessed
// by sleeping, and a server whose log reports a configuration error is not
// ready: ganesha drops what it cannot read and serves the rest.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "server/ganesha/GaneshaWorkDir.h"
#include "server/ganesha/Squash.h"

namespace nfsrdma::server {


// Who may use an export and how: one ganesha CLIENT block. Blocks are tried
// in order and the first that matches the client's address decides.
struct GaneshaClientSpec {
  // a host, network (10.0.0.0/24, 10.0.0.0/255.255.255.0), wildcard (*.lab,
  // *) or @netgroup: written for ganesha as GaneshaClients.h says
  std::string clients;
  bool readOnly = false;
  Squash squash = Squash::Root;
  std::optional<std::uint32_t> anonymousUid{};  // whom squashed users become
  std::optional<std::uint32_t> anonymousGid{};
};

// One NFSv4 export served through the VFS FSAL.
struct GaneshaExportSpec {
  std::filesystem::path path;  // directory to export (must exist)
  std::string pseudo;          // NFSv4 pseudo path, e.g. "/export"
  // Without client blocks, readOnly and rootSquash apply to every client
  // that reaches the listener; with them, a client no block matches gets no
  // access at all.
  bool readOnly = false;
  bool rootSquash = false;  // false: No_Root_Squash
  uint16_t exportId = 1;
  std::vector<GaneshaClientSpec> clients{};
};

struct GaneshaOptions {
  std::string bindAddress = "127.0.0.1";
  uint16_t port = 0;  // 0: pick a free port
  std::vector<GaneshaExportSpec> exports;
  // Config, pid, log, stdout, recovery state: a directory start() makes, or
  // an empty one of ours (GaneshaWorkDir.h); empty: a fresh temporary one,
  // removed on stop.
  std::filesystem::path workDir;
  std::chrono::seconds startTimeout{30};
  unsigned leaseSeconds = 20;
  // NFSv4 minor versions served (0, 1, 2). 0 stays on by default: libnfs,
  // the benchmark's anchor, speaks 4.0.
  std::vector<unsigned> minorVersions{0, 1, 2};
  // RDMA listener port (20049 by convention); 0 = TCP only. Rendered only
  // when ganeshaSupportsNfsRdma() says the installed build has NFS/RDMA;
  // start() refuses a non-zero value otherwise.
  uint16_t rdmaPort = 0;
  // MaxRead and MaxWrite of every export (what NFSv4 clients learn as
  // maxread/maxwrite); 0 keeps ganesha's default of 1 MiB.
  std::uint32_t maxIoBytes = 0;
  // Where start() says, in one line, which work directories of ended runs it
  // removed (sweepEndedGaneshaWorkDirs). Unset: standard error.
  std::function<void(const std::string&)> notice{};
};

// Renders a complete ganesha.conf for `opts` listening on `port`, with the
// NFSv4 recovery directory, and nothing else, under `workDir`. No file or
// process is touched; the one lookup is of a client host name ganesha's
// config cannot carry (GaneshaClients.h), whose addresses are written
// instead, as ganesha resolves the names it reads when it starts. Throws
// std::runtime_error on an export whose pseudo path is not absolute, a
// duplicate export id or pseudo path, a path or pseudo containing characters
// ganesha's config parser would mis-read, a client ganesha cannot be given
// (or a name that does not resolve), or minor versions outside 0..2 (or none).
std::string renderGaneshaConfig(const GaneshaOptions& opts, uint16_t port,
                                const std::filesystem::path& workDir);

// Whether a client at the numeric IPv4/IPv6 `address` may use `exp`, as the
// rendered config decides it (the first CLIENT block that matches; none
// matching means no access, and ganesha then hides the export from that
// client, so it sees NFS4ERR_NOENT), from the terms the block is rendered
// with. nullopt when a block that comes first is a host name, a *.domain or
// ? pattern or an @netgroup: only ganesha's own lookup can tell.
std::optional<bool> exportAdmits(const GaneshaExportSpec& exp, const std::string& address);

// The addresses a client on this host comes from when it connects to a
// listener on listenAddress: that address, or loopback for a wildcard one
// (127.0.0.1 and ::1 for a dual-stack "::").
std::vector<std::string> localClientAddresses(const std::string& listenAddress);

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
