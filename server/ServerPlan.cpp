// ServerPlan: config + host snapshot -> ordered changes, and their diff.
#include "server/ServerPlan.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "server/CommandRunner.h"
#include "server/ExportsFile.h"
#include "server/HostFiles.h"
#include "server/NfsConf.h"

namespace nfsrdma::server {
namespace {

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string yn(bool b) {
  return b ? "y" : "n";
}

std::string oneLine(const std::optional<std::string>& v) {
  if (!v) return "(absent)";
  std::string t = trimmed(*v);
  std::replace(t.begin(), t.end(), '\n', ' ');
  return t.empty() ? "(empty)" : t;
}

}  // namespace

const char* stageName(Stage s) {
  switch (s) {
    case Stage::Modules:
      return "modules";
    case Stage::Files:
      return "files";
    case Stage::Exports:
      return "exports";
    case Stage::Tuning:
      return "tuning";
    case Stage::Versions:
      return "versions";
    case Stage::LeaseGrace:
      return "lease/grace";
    case Stage::Ports:
      return "ports";
    case Stage::Threads:
      return "threads";
  }
  return "?";
}

std::string renderOwnExports(const ServerConfig& config) {
  ExportsFile file;
  for (const auto& e : config.exports) {
    ExportEntry entry;
    entry.path = e.path;
    for (const auto& c : e.clients) entry.clients.push_back({c.host, c.exportOptions()});
    file.entries.push_back(std::move(entry));
  }
  return "# Managed by nfsrdma-server apply; edit the YAML config, not this file.\n"
         "# /etc/exports is never touched; `nfsrdma-server rollback` restores the previous "
         "version.\n" +
         file.render();
}

const std::vector<std::string>& ownedNfsConfKeys() {
  static const std::vector<std::string> keys = {"threads", "vers3",   "vers4",      "vers4.0",
                                                "vers4.1", "vers4.2", "lease-time", "grace-time",
                                                "tcp",     "port",    "rdma",       "rdma-port"};
  return keys;
}

std::vector<std::pair<std::string, std::string>> nfsdKeys(const ServerConfig& c) {
  const auto& n = c.nfsd;
  std::vector<std::pair<std::string, std::string>> keys = {
      {"threads", std::to_string(n.threads)},
      {"vers3", yn(n.v3)},
      {"vers4", yn(n.anyV4())},
      {"vers4.0", yn(n.v40)},
      {"vers4.1", yn(n.v41)},
      {"vers4.2", yn(n.v42)},
  };
  if (n.leaseTime) keys.push_back({"lease-time", std::to_string(*n.leaseTime)});
  if (n.graceTime) keys.push_back({"grace-time", std::to_string(*n.graceTime)});
  keys.push_back({"tcp", yn(c.tcp.enabled)});
  if (c.tcp.enabled) keys.push_back({"port", std::to_string(c.tcp.port)});
  if (c.rdma.enabled) {
    keys.push_back({"rdma", "y"});
    keys.push_back({"rdma-port", std::to_string(c.rdma.port)});
  }
  // Only keys in ownedNfsConfKeys(): rollback undoes exactly those.
  const auto& owned = ownedNfsConfKeys();
  for (const auto& [key, value] : keys) {
    if (std::find(owned.begin(), owned.end(), key) == owned.end())
      throw std::logic_error("nfsdKeys: [nfsd] " + key + " is not in ownedNfsConfKeys()");
  }
  return keys;
}

std::vector<std::string> nfsdKeysToRemove(const ServerConfig& c) {
  if (c.rdma.enabled) return {};
  return {"rdma", "rdma-port"};
}

std::string editNfsConf(const std::string& current, const ServerConfig& c) {
  NfsConf conf(current);
  for (const auto& [key, value] : nfsdKeys(c)) conf.set(kNfsConfSection, key, value);
  for (const auto& key : nfsdKeysToRemove(c)) {
    conf.remove(kNfsConfSection, key);
  }
  return conf.text();
}

std::string explicitVersions(const std::string& reported) {
  std::vector<std::string> tokens;
  std::istringstream in(reported);
  bool hasFourZero = false;
  for (std::string t; in >> t;) {
    hasFourZero = hasFourZero || t.substr(1) == "4.0";
    tokens.push_back(t);
  }
  std::string out;
  for (const auto& t : tokens) {
    out += (out.empty() ? "" : " ") + t;
    if (t == "+4" && !hasFourZero) out += " +4.0";
  }
  return out + (reported.empty() ? "" : "\n");
}

std::string desiredVersions(const std::string& current, const NfsdSpec& n) {
  const std::map<std::string, bool> want = {
      {"3", n.v3}, {"4", n.anyV4()}, {"4.0", n.v40}, {"4.1", n.v41}, {"4.2", n.v42}};
  std::vector<std::string> tokens;
  std::map<std::string, bool> seen;
  std::istringstream in(current);
  for (std::string t; in >> t;) {
    if (t.size() < 2 || (t[0] != '+' && t[0] != '-')) continue;
    std::string v = t.substr(1);
    auto it = want.find(v);
    tokens.push_back(it == want.end() ? t : (it->second ? "+" : "-") + v);
    seen[v] = true;
  }
  // The kernel reports 4.0 only when it is off ("+4 implies 4.0 unless -4.0
  // is present"), so an absent 4.0 is on and must be turned off explicitly,
  // after the "+4" that would turn it on again.
  for (const char* v : {"3", "4", "4.0", "4.1", "4.2"}) {
    if (seen.count(v)) continue;
    if (std::string(v) == "4.0" && want.at(v)) continue;
    tokens.push_back((want.at(v) ? "+" : "-") + std::string(v));
  }
  std::string out;
  for (const auto& t : tokens) out += (out.empty() ? "" : " ") + t;
  return out + "\n";
}

namespace {

// computePlan's steps, one per stage (and the nfs.conf override check
// between the files and exportfs), each adding its changes and notes to one
// plan. The order of the calls is the order of the notes.
class PlanBuilder {
 public:
  PlanBuilder(const ServerConfig& config, const HostPaths& paths, const HostState& state)
      : config_(config), paths_(paths), state_(state), running_(state.nfsdRunning()) {}

  void loadModules();
  // Whether our exports file changes (exportfs then runs).
  bool writeOwnExports();
  // The /etc/nfs.conf text the plan leaves.
  std::string writeNfsConf();
  void listOverrides(const std::string& confAfter);
  void refuseOverrides() const;
  void reexport();
  void tuneSvcRdma();
  void noteMissingControlFiles();
  void setVersions();
  void setLeaseAndGrace();
  void openListeners();
  void setThreads();
  ServerPlan sortedByStage();

 private:
  void add(Change c) { plan_.changes.push_back(std::move(c)); }
  void listOverrideOf(const std::string& key, const std::string& want,
                      const std::optional<NfsConfOrigin>& got);
  void listKeyStillRead(const std::string& key, const NfsConfOrigin& got);
  void openListener(bool enabled, const char* transport, const char* label,
                    std::uint16_t portNumber);
  std::string threadsReason() const;

  const ServerConfig& config_;
  const HostPaths& paths_;
  const HostState& state_;
  const bool running_;
  ServerPlan plan_;
};

void PlanBuilder::loadModules() {
  std::vector<std::pair<std::string, std::string>> modules = {{"nfsd", "the kernel NFS server"}};
  if (config_.rdma.enabled)
    modules.push_back({state_.rdmaServerModule, "the server side of NFS over RDMA"});
  for (const auto& [name, why] : modules) {
    if (state_.moduleLoaded(paths_, name)) continue;
    Change c;
    c.kind = ChangeKind::LoadModule;
    c.stage = Stage::Modules;
    c.target = name;
    c.argv = {"modprobe", name};
    c.reason = name + " is not loaded (" + why + ")";
    add(c);
  }
}

bool PlanBuilder::writeOwnExports() {
  const std::string exportsPath = HostPaths::kOwnExports;
  auto exportsBefore = readHostFile(paths_, exportsPath);
  const std::string exportsAfter = renderOwnExports(config_);
  const bool exportsChange = exportsBefore != exportsAfter;
  if (exportsChange) {
    add({ChangeKind::WriteFile,
         Stage::Files,
         exportsPath,
         exportsBefore,
         exportsAfter,
         false,
         {},
         "our exports, one line per export"});
  }
  return exportsChange;
}

std::string PlanBuilder::writeNfsConf() {
  auto confBefore = readHostFile(paths_, HostPaths::kNfsConf);
  const std::string confAfter = editNfsConf(confBefore.value_or(""), config_);
  if (confBefore != confAfter) {
    add({ChangeKind::WriteFile,
         Stage::Files,
         HostPaths::kNfsConf,
         confBefore,
         confAfter,
         false,
         {},
         "our [nfsd] keys, so nfs-server starts this way after a reboot"});
  }
  return confAfter;
}

void PlanBuilder::listOverrides(const std::string& confAfter) {
  // What nfs-utils will read once that nfs.conf is written: nfs.conf.d and
  // includes come on top of it, and we edit neither.
  const EffectiveNfsConf effective(paths_, confAfter);
  for (const auto& w : effective.warnings()) plan_.notes.push_back(w);
  for (const auto& r : effective.refusals()) plan_.refusals.push_back(r);
  for (const auto& [key, want] : nfsdKeys(config_)) {
    listOverrideOf(key, want, effective.get("nfsd", key));
  }
  for (const auto& key : nfsdKeysToRemove(config_)) {
    if (auto got = effective.get("nfsd", key)) listKeyStillRead(key, *got);
  }
}

void PlanBuilder::listOverrideOf(const std::string& key, const std::string& want,
                                 const std::optional<NfsConfOrigin>& got) {
  if (got && !got->arg && nfsConfSameValue(got->value, want)) return;
  if (!got) {  // cannot happen: we just set it; say so rather than assume
    plan_.refusals.push_back(std::string(HostPaths::kNfsConf) + ": [nfsd] " + key +
                             " is still unset after the edit");
    return;
  }
  std::string o = got->file + ":" + std::to_string(got->line) + ": ";
  if (got->arg) {
    o += "[nfsd \"" + *got->arg + "\"] " + key + "=" + got->value + " replaces [nfsd] " + key +
         " (nfs-utils then reads none), so the " + key + "=" + want + " set in " +
         HostPaths::kNfsConf + " is not used";
  } else {
    o += key + "=" + got->value + " overrides the " + key + "=" + want + " set in " +
         HostPaths::kNfsConf;
  }
  if (!got->includedFrom.empty()) {
    o += " (included from " + got->includedFrom + ")";
  } else if (got->file != HostPaths::kNfsConf) {
    o += std::string(" (nfs-utils reads ") + HostPaths::kNfsConf + ".d after " +
         HostPaths::kNfsConf + ")";
  }
  plan_.refusals.push_back(o);
}

void PlanBuilder::listKeyStillRead(const std::string& key, const NfsConfOrigin& got) {
  std::string o = got.file + ":" + std::to_string(got.line) + ": " + key + "=" + got.value +
                  " is read by rpc.nfsd although the config turns RDMA off";
  if (!got.includedFrom.empty()) o += " (included from " + got.includedFrom + ")";
  plan_.refusals.push_back(o);
}

void PlanBuilder::refuseOverrides() const {
  if (plan_.refusals.empty()) return;
  std::string msg = "refusing to apply: nfs-utils would not read the [nfsd] values set in " +
                    std::string(HostPaths::kNfsConf) + " as the plan sets them:";
  for (const auto& o : plan_.refusals) msg += "\n  " + o;
  msg += "\nnfsrdma-server edits only " + std::string(HostPaths::kNfsConf) +
         "; change or remove what those lines name (or make the config agree with them), then "
         "apply again";
  throw NfsConfOverridden(msg);
}

void PlanBuilder::reexport() {
  if (state_.exportfs.empty()) {
    plan_.notes.push_back(
        "exportfs is not installed, so the kernel will not see the exports until it is "
        "(apt-get install nfs-kernel-server)");
    return;
  }
  add({ChangeKind::RunCommand,
       Stage::Exports,
       "",
       std::nullopt,
       "",
       false,
       {state_.exportfs, "-ra"},
       "re-export so the kernel serves the new exports"});
}

// svc_rdma tuning: only the knobs this kernel has.
void PlanBuilder::tuneSvcRdma() {
  for (const auto& t : config_.tuning) {
    auto it = state_.svcRdma.find(t.name);
    const std::string host = std::string(HostPaths::kSvcRdmaSysctl) + "/" + t.name;
    if (it == state_.svcRdma.end()) {
      plan_.notes.push_back("sunrpc.svc_rdma." + t.name +
                            " is not in this kernel (or svcrdma is not loaded yet); " +
                            std::to_string(t.value) + " not set");
      continue;
    }
    if (it->second == std::to_string(t.value)) continue;
    // Keep the raw text (with its newline) so rollback writes back the same bytes.
    add({ChangeKind::KernelValue,
         Stage::Tuning,
         host,
         readHostFile(paths_, host).value_or(it->second),
         std::to_string(t.value) + "\n",
         false,
         {},
         t.reason});
  }
}

void PlanBuilder::noteMissingControlFiles() {
  if (state_.nfsdFsMounted()) return;
  plan_.notes.push_back(
      "the nfsd control files (" + paths_.resolve(HostPaths::kNfsdDir).string() +
      ") are not there: nfsd is not loaded or its filesystem is not mounted; nfs.conf carries "
      "versions, ports and threads to the next `systemctl restart nfs-server`");
}

void PlanBuilder::setVersions() {
  if (!state_.versions) return;
  const std::string want = desiredVersions(*state_.versions, config_.nfsd);
  if (trimmed(want) == trimmed(*state_.versions)) return;
  if (running_) {
    plan_.notes.push_back(
        "nfsd is running, so its versions (" + oneLine(state_.versions) +
        ") cannot change now; nfs.conf has them for `systemctl restart nfs-server`");
    return;
  }
  add({ChangeKind::KernelValue,
       Stage::Versions,
       HostPaths::kVersions,
       state_.versions,
       want,
       false,
       {},
       "enabled NFS versions"});
}

void PlanBuilder::setLeaseAndGrace() {
  for (const auto& [value, file, have, what] :
       {std::tuple{config_.nfsd.leaseTime, HostPaths::kLeaseTime, state_.leaseTime, "lease"},
        std::tuple{config_.nfsd.graceTime, HostPaths::kGraceTime, state_.graceTime, "grace"}}) {
    if (!value || !have || trimmed(*have) == std::to_string(*value)) continue;
    if (running_) {
      plan_.notes.push_back(std::string("nfsd is running, so the ") + what + " time stays " +
                            trimmed(*have) + " s until `systemctl restart nfs-server`");
      continue;
    }
    add({ChangeKind::KernelValue,
         Stage::LeaseGrace,
         file,
         have,
         std::to_string(*value) + "\n",
         false,
         {},
         std::string("NFSv4 ") + what + " time in seconds"});
  }
}

// Listeners, each only when absent (a second write fails with EADDRINUSE).
// TCP is asked for too: once any listener exists (ours for RDMA), starting
// nfsd no longer opens the default TCP one.
void PlanBuilder::openListeners() {
  openListener(config_.tcp.enabled, "tcp", "TCP", config_.tcp.port);
  openListener(config_.rdma.enabled, "rdma", "RDMA", config_.rdma.port);
}

void PlanBuilder::openListener(bool enabled, const char* transport, const char* label,
                               std::uint16_t portNumber) {
  if (!enabled || !state_.portList || state_.hasListener(transport, portNumber)) return;
  const std::string port = std::to_string(portNumber);
  if (!state_.nfsdctl.empty()) {
    add({ChangeKind::RunCommand,
         Stage::Ports,
         HostPaths::kPortList,
         state_.portList,
         "",
         false,
         {state_.nfsdctl, "listener", std::string("+") + transport + "::" + port},
         std::string("open the ") + label + " listener (nfsdctl is installed)"});
  } else {
    add({ChangeKind::KernelValue,
         Stage::Ports,
         HostPaths::kPortList,
         state_.portList,
         std::string(transport) + " " + port + "\n",
         true,
         {},
         std::string("open the ") + label + " listener"});
  }
}

void PlanBuilder::setThreads() {
  if (!state_.threads || trimmed(*state_.threads) == std::to_string(config_.nfsd.threads)) return;
  const std::string n = std::to_string(config_.nfsd.threads);
  const std::string what = threadsReason();
  if (!state_.nfsdctl.empty()) {
    add({ChangeKind::RunCommand,
         Stage::Threads,
         HostPaths::kThreads,
         state_.threads,
         "",
         false,
         {state_.nfsdctl, "threads", n},
         what});
  } else {
    add({ChangeKind::KernelValue,
         Stage::Threads,
         HostPaths::kThreads,
         state_.threads,
         n + "\n",
         false,
         {},
         what});
  }
}

// Starting nfsd starts the grace period, which refuses what a user does
// next (open a file) for a while: the plan says so where it starts it.
std::string PlanBuilder::threadsReason() const {
  if (running_) return "resize the nfsd thread pool";
  const std::string grace = config_.nfsd.graceTime ? std::to_string(*config_.nfsd.graceTime)
                            : state_.graceTime     ? trimmed(*state_.graceTime)
                                                   : "?";
  return "start nfsd; its NFSv4 grace period follows (" + grace +
         " s: OPEN, REMOVE and RENAME get NFS4ERR_GRACE until earlier clients have reclaimed "
         "their state)";
}

ServerPlan PlanBuilder::sortedByStage() {
  std::stable_sort(plan_.changes.begin(), plan_.changes.end(),
                   [](const Change& a, const Change& b) { return a.stage < b.stage; });
  return std::move(plan_);
}

}  // namespace

ServerPlan computePlan(const ServerConfig& config, const HostPaths& paths, const HostState& state,
                       NfsConfOverrides overrides) {
  PlanBuilder plan(config, paths, state);
  plan.loadModules();
  const bool exportsChange = plan.writeOwnExports();
  const std::string confAfter = plan.writeNfsConf();
  plan.listOverrides(confAfter);
  if (overrides == NfsConfOverrides::Refuse) plan.refuseOverrides();
  if (exportsChange) plan.reexport();
  plan.tuneSvcRdma();
  plan.noteMissingControlFiles();
  plan.setVersions();
  plan.setLeaseAndGrace();
  plan.openListeners();
  plan.setThreads();
  return plan.sortedByStage();
}

std::string diffText(const std::string& before, const std::string& after) {
  const auto a = splitLines(before), b = splitLines(after);
  const std::size_t n = a.size(), m = b.size();
  // LCS table; our files are small (nfs.conf is ~100 lines).
  std::vector<std::vector<unsigned>> lcs(n + 1, std::vector<unsigned>(m + 1, 0));
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t j = m; j-- > 0;) {
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  std::vector<std::pair<char, std::string>> ops;
  std::size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      ops.push_back({' ', a[i]});
      ++i;
      ++j;
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      ops.push_back({'-', a[i++]});  // on a tie the old line first, as diff -u prints a change
    } else {
      ops.push_back({'+', b[j++]});
    }
  }
  std::vector<bool> show(ops.size(), false);
  for (std::size_t k = 0; k < ops.size(); ++k) {
    if (ops[k].first == ' ') continue;
    for (std::size_t c = (k >= 2 ? k - 2 : 0); c <= std::min(ops.size() - 1, k + 2); ++c)
      show[c] = true;
  }
  std::string out;
  bool gap = false;
  for (std::size_t k = 0; k < ops.size(); ++k) {
    if (!show[k]) {
      gap = true;
      continue;
    }
    if (gap && !out.empty()) out += "  ...\n";
    gap = false;
    out += std::string(1, ops[k].first) + ops[k].second + "\n";
  }
  return out;
}

std::string ServerPlan::render() const {
  std::ostringstream out;
  if (changes.empty() && !refusals.empty()) {
    out << "No changes apply could make, but the host does not match the config "
           "(apply refuses, see below).\n";
  } else if (changes.empty()) {
    out << "No changes: the host already matches the config.\n";
  } else {
    out << changes.size() << " change" << (changes.size() == 1 ? "" : "s") << ", in this order:\n";
  }
  for (const auto& c : changes) {
    out << "[" << stageName(c.stage) << "] ";
    switch (c.kind) {
      case ChangeKind::LoadModule:
      case ChangeKind::RunCommand:
        out << "run: " << shellJoin(c.argv) << "   # " << c.reason << "\n";
        break;
      case ChangeKind::WriteFile:
        out << "write " << c.target << (c.before ? "" : " (new file)") << "   # " << c.reason
            << "\n";
        out << "--- " << c.target << (c.before ? "" : " (absent)") << "\n+++ " << c.target << "\n";
        out << diffText(c.before.value_or(""), c.after);
        break;
      case ChangeKind::KernelValue:
        if (c.append) {
          out << c.target << ": add '" << trimmed(c.after) << "' (now: " << oneLine(c.before)
              << ")   # " << c.reason << "\n";
        } else {
          out << c.target << ": " << oneLine(c.before) << " -> " << trimmed(c.after) << "   # "
              << c.reason << "\n";
        }
        break;
    }
  }
  if (!refusals.empty()) {
    out << "Apply refuses, and changes nothing, while these stand (nfsrdma-server edits only "
        << HostPaths::kNfsConf << " and its own files):\n";
    for (const auto& o : refusals) out << "  - " << o << "\n";
  }
  out << renderNotes();
  return out.str();
}

std::string ServerPlan::renderNotes() const {
  std::ostringstream out;
  if (!notes.empty()) {
    out << "Not changed:\n";
    for (const auto& n : notes) out << "  - " << n << "\n";
  }
  return out.str();
}

}  // namespace nfsrdma::server
