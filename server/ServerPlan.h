// ServerPlan: the knfsd backend as data. computePlan() compares the config
// with a HostState snapshot and lists typed changes; nothing is done until
// applyConfig() (see PlanExecutor.h) walks them in nfs-utils' order: modules,
// our files, exportfs, svc_rdma tuning, then versions, lease/grace, ports,
// threads (nfsd answers EBUSY to versions or ports once threads run). A host
// that already matches yields an empty plan, which is what makes apply
// idempotent.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "server/HostPaths.h"
#include "server/HostState.h"
#include "server/ServerConfig.h"

namespace nfsrdma::server {

// The order in which changes are applied; one comment per stage.
enum class Stage {
  Modules,     // modprobe nfsd / svcrdma (rpcrdma): the control files appear
  Files,       // /etc/exports.d/nfsrdma.exports and our keys in /etc/nfs.conf
  Exports,     // exportfs -ra so the kernel sees the new exports
  Tuning,      // sunrpc.svc_rdma sysctls, before listeners accept connections
  Versions,    // /proc/fs/nfsd/versions (only while nfsd is stopped)
  LeaseGrace,  // nfsv4leasetime / nfsv4gracetime (only while nfsd is stopped)
  Ports,       // "rdma <port>" listener, only when absent
  Threads,     // starts (or resizes) nfsd
};
const char* stageName(Stage s);

enum class ChangeKind {
  LoadModule,   // target: module name; argv: modprobe command
  WriteFile,    // target: host path; before/after: whole file (before nullopt: new file)
  KernelValue,  // target: host path of a /proc file; after: text written
  RunCommand,   // argv
};

struct Change {
  ChangeKind kind = ChangeKind::RunCommand;
  Stage stage = Stage::Files;
  std::string target;
  std::optional<std::string> before;
  std::string after;
  bool append = false;  // KernelValue: add a line (port list) rather than replace
  std::vector<std::string> argv;
  std::string reason;  // one line, shown by `plan`
};

struct ServerPlan {
  std::vector<Change> changes;     // sorted by stage
  std::vector<std::string> notes;  // things not done and why (nfsd running, no RDMA sysctls, ...)
  // Why apply refuses, one line each naming the file (and line) and what
  // was expected: our [nfsd] keys that nfs-utils would read from a line we
  // do not edit (/etc/nfs.conf.d/*.conf, an `include`d file), and what
  // nfs-utils reads where it cannot be known (EffectiveNfsConf::refusals).
  // Apply refuses while there are any (see NfsConfOverrides); `plan` adds
  // what apply's checks before its first change find (applyRefusals).
  std::vector<std::string> refusals;
  bool empty() const { return changes.empty(); }
  // Human-readable diff: file hunks, kernel values old -> new, commands.
  std::string render() const;
  // Only the "Not changed:" notes (render() ends with them).
  std::string renderNotes() const;
};

// The content our exports file must have for `config`.
std::string renderOwnExports(const ServerConfig& config);
// The nfs.conf section we set keys in, and every key we may set there (what
// rollback undoes; the rest of the file is the admin's).
inline constexpr const char* kNfsConfSection = "nfsd";
const std::vector<std::string>& ownedNfsConfKeys();
// Our [nfsd] keys and the values `config` asks for, in the order they are set;
// each is one of ownedNfsConfKeys() (std::logic_error otherwise).
std::vector<std::pair<std::string, std::string>> nfsdKeys(const ServerConfig& config);
// Our [nfsd] keys `config` wants absent: rdma and rdma-port when RDMA is off,
// since rpc.nfsd reads rdma=n as a port name and logs an error at each start.
std::vector<std::string> nfsdKeysToRemove(const ServerConfig& config);
// /etc/nfs.conf after setting our [nfsd] keys in `current` and removing the
// ones nfsdKeysToRemove() names (other bytes kept).
std::string editNfsConf(const std::string& current, const ServerConfig& config);
// /proc/fs/nfsd/versions as read, with the 4.0 the kernel implies written
// out ("+4" without a 4.0 token means +4.0, placed after it): writing the
// text back must restore 4.0 too, and a bare "+4" does not turn it on while
// another minor version is on.
std::string explicitVersions(const std::string& reported);
// The /proc/fs/nfsd/versions text to write, keeping the kernel's token order.
std::string desiredVersions(const std::string& current, const NfsdSpec& nfsd);

// What computePlan does when nfs-utils would not read our value of an
// [nfsd] key because a file we do not edit (nfs.conf.d, an include) sets it
// after /etc/nfs.conf, or when what it reads cannot be known. We never edit
// those files: they belong to the admin or to another tool, and silently
// writing a value that is then overridden would leave the server running
// other than the plan says.
enum class NfsConfOverrides {
  Refuse,  // throw NfsConfOverridden naming each file and line (apply)
  List,    // record them in ServerPlan::refusals (plan)
};

struct NfsConfOverridden : std::runtime_error {
  using std::runtime_error::runtime_error;
};

ServerPlan computePlan(const ServerConfig& config, const HostPaths& paths, const HostState& state,
                       NfsConfOverrides overrides = NfsConfOverrides::Refuse);

// A line diff of two texts with two lines of context ("-", "+", " ").
std::string diffText(const std::string& before, const std::string& after);

}  // namespace nfsrdma::server
