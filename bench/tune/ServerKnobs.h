// The server's knobs tune may turn: knfsd's thread count and svcrdma's
// credit grant (max_requests), always through `nfsrdma-server`, so that
// the server ends as it began. tune writes a variant of the user's server
// config per setting (the config's own values, with nfsd.threads and
// tuning.max_requests set), applies it when the setting changes, and rolls
// everything back when it ends: also after Ctrl-C or an error, and when
// that rollback fails (a lost connection), the undo record on the server
// lets a later `nfsrdma-server rollback` finish it. On this host, or on the
// server's through a command prefix (--server-exec 'ssh root@srv').
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/tune/TuneSearch.h"
#include "bench/tune/TuneSpace.h"
#include "hostcheck/CommandRunner.h"

namespace nfsrdma::bench {

// Runs commands on the server's host: directly, or through a prefix that
// runs the one shell command line it is given there, as `ssh root@srv`
// and `sh -c` do (the command's words are quoted into that line).
class ServerHost {
 public:
  ServerHost(hostcheck::CommandRunner& runner, std::string prefix)
      : runner_(runner), prefix_(std::move(prefix)) {}
  hostcheck::CommandResult run(const std::vector<std::string>& argv);
  // "on this host" or "through 'ssh root@srv'"
  std::string where() const;

 private:
  hostcheck::CommandRunner& runner_;
  std::string prefix_;
};

// The server's values now (nullopt: the file is missing there).
struct ServerStart {
  std::optional<std::uint32_t> threads;      // /proc/fs/nfsd/threads
  std::optional<std::uint32_t> maxRequests;  // /proc/sys/sunrpc/svc_rdma/max_requests
};
ServerStart readServerStart(ServerHost& host);

// The knobs for the start (threads 1, 4, 8, 16, 32, 64 and the start's;
// max_requests 32, 64, 128, 256 and the start's, over RDMA only), appended
// to space; or, when they cannot be turned, why, in space.leftAlone.
// whyNot: empty when allowed, else the reason both are left alone.
void addServerKnobs(KnobSpace& space, const ServerStart& start, bool rdma,
                    const std::string& whyNot);

// The user's config with the setting's server knobs written in (YAML);
// throws std::invalid_argument naming the file when it is not YAML.
std::string serverConfigVariant(const std::string& configText, const std::vector<Knob>& knobs,
                                const Setting& setting);
// The server knobs of a setting as a config fragment ("nfsd:\n  threads: 16\n"...),
// empty when the setting has none that differ from start.
std::string serverFragment(const std::vector<Knob>& knobs, const Setting& setting,
                           const Setting& start);

// A change of the server that failed (apply refused or stopped): the run
// ends there, rolled back, rather than counting it as a trial's figure.
struct ServerChangeFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Applies settings' variants on the server and puts it back at the end.
// A server that an earlier `apply` of the same config set up (its undo
// record pending) is put back by `rollback` and that config applied again;
// one without a record, by `rollback` alone.
class ServerSession {
 public:
  // Checks before the first change: nfsrdma-server runs there; `plan` of
  // the config is not refused; and with an undo record pending, the host
  // matches the config already (plan: no changes), so that applying it
  // again at the end restores it. Throws std::runtime_error saying what
  // stops it.
  // The variants go to a file of its own there (mktemp), removed at the end.
  ServerSession(ServerHost& host, std::string configText);
  ~ServerSession();  // rolls back when finish() was not reached
  ServerSession(const ServerSession&) = delete;
  ServerSession& operator=(const ServerSession&) = delete;

  // Applies the variant for the setting's server knobs when they differ
  // from what is in effect; throws std::runtime_error with apply's words.
  void use(const std::vector<Knob>& knobs, const Setting& setting);
  // Rolls back (keep: leaves the last setting applied, for --apply, and
  // returns the rollback command). Returns what was done, for the report.
  std::string finish(bool keep);
  std::size_t applies() const { return applies_; }

 private:
  void write(const std::string& text);
  void checkPlan();  // the constructor's checks after the temporary file exists
  ServerHost& host_;
  std::string config_;
  std::string path_;
  // The server knobs away from their start in the variant applied last
  // (by name); none: untouched.
  std::optional<std::map<std::string, std::string>> inEffect_;
  bool reapply_ = false;  // an apply of the config was pending before tune
  std::size_t applies_ = 0;
  bool finished_ = false;
};

}  // namespace nfsrdma::bench
