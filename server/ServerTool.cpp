// ServerTool: option parsing (Boost.Program_options) and dispatch. Every
// subcommand follows one shape: read and validate everything first, then act,
// so a bad input leaves the host untouched.
#include "server/ServerTool.h"

// Boost 1.74's typed_value<std::string>::notify trips GCC 12's
// -Wnull-dereference (a false positive inside the header's inlined
// std::string assignment); silence it for Boost's code only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <boost/program_options.hpp>
#pragma GCC diagnostic pop

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>

#include "server/CommandRunner.h"
#include "server/ConfigHostChecks.h"
#include "server/HostFiles.h"
#include "server/HostPaths.h"
#include "server/HostState.h"
#include "server/PlanExecutor.h"
#include "server/Rollback.h"
#include "server/ServerConfig.h"
#include "server/ServerDoctor.h"
#include "server/ServerPlan.h"
#include "server/ganesha/GaneshaServer.h"
#include "util/ToolCli.h"

namespace nfsrdma::server {
namespace po = boost::program_options;
namespace fs = std::filesystem;
namespace {

volatile std::sig_atomic_t gStopRequested = 0;
extern "C" void onStopSignal(int) {
  gStopRequested = 1;
}

using tool::UsageError;

// The command line, parsed.
struct ServerArgs {
  bool help = false;
  bool version = false;
  std::string command;  // empty: none given
  std::optional<std::string> config;
  std::string root = "/";
  bool dryRun = false;
  bool allowInsecure = false;
  std::optional<int> port;  // serve's three
  std::optional<std::string> bind;
  std::optional<std::string> workDir;
};

// What a command runs with: its checked arguments, the host, the config
// (when the command takes one and it was given).
struct ServerRun {
  const ServerArgs& args;
  const HostPaths& paths;
  const std::optional<ServerConfig>& cfg;
  CommandRunner& runner;
  std::ostream& out;
  std::ostream& err;
};

// The lines of an export table, indented: "(none)" when it has none,
// "(not available)" when it could not be read. `skipComments`: /proc's
// table opens with '#' lines.
void printExportLines(std::ostream& o, const std::optional<std::string>& table, bool skipComments) {
  if (!table) {
    o << "  (not available)\n";
    return;
  }
  std::istringstream in(*table);
  bool any = false;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || (skipComments && line[0] == '#')) continue;
    o << "  " << line << "\n";
    any = true;
  }
  if (!any) o << "  (none)\n";
}

std::string statusText(const HostPaths& paths, const HostState& st) {
  std::ostringstream o;
  o << "root: " << paths.root().string() << "\n";
  if (!st.nfsdFsMounted()) {
    o << "nfsd: not loaded (no " << paths.resolve(HostPaths::kThreads).string() << ")\n";
  } else {
    o << "nfsd: "
      << (st.nfsdRunning() ? "running, " + trimmed(*st.threads) + " threads"
                           : "stopped (0 threads)")
      << "\n";
  }
  o << "versions: " << (st.versions ? trimmed(*st.versions) : "(not available)") << "\n";
  o << "lease/grace: " << (st.leaseTime ? trimmed(*st.leaseTime) + " s" : "?") << " / "
    << (st.graceTime ? trimmed(*st.graceTime) + " s" : "?") << "\n";
  auto l = st.listeners();
  std::string ls;
  for (const auto& x : l) ls += (ls.empty() ? "" : ", ") + x;
  o << "port list: " << (st.portList ? (ls.empty() ? "(empty)" : ls) : "(not available)") << "\n";
  o << "svc_rdma:";
  if (st.svcRdma.empty()) o << " (not available: svcrdma/rpcrdma not loaded)";
  for (const auto& [k, v] : st.svcRdma) o << " " << k << "=" << v;
  o << "\nexports as the kernel sees them (" << HostPaths::kKernelExports << "):\n";
  printExportLines(o, st.kernelExports, true);
  // The kernel's export cache fills on demand; etab is what exportfs handed it.
  o << "exports given to the kernel by exportfs (/var/lib/nfs/etab):\n";
  printExportLines(o, readHostFile(paths, "/var/lib/nfs/etab"), false);
  auto own = readHostFile(paths, HostPaths::kOwnExports);
  o << "our exports file " << HostPaths::kOwnExports << ": " << (own ? "present" : "absent")
    << "\n";
  o << "RDMA devices:";
  if (st.rdmaDevices.empty()) o << " (none)";
  o << "\n";
  for (const auto& d : st.rdmaDevices) {
    for (const auto& p : d.ports) {
      o << "  " << d.name << " port " << p.number << ": " << p.state << ", " << p.linkLayer << "\n";
    }
  }
  auto rec = readHostFile(paths, HostPaths::kLastApply);
  o << "last apply: " << (rec ? "recorded (rollback available)" : "none recorded") << "\n";
  return o.str();
}

// --port, --bind and --work-dir over the config's address and TCP port.
void applyServeFlags(GaneshaOptions& g, const ServerConfig& cfg, const ServerArgs& a) {
  g.bindAddress = a.bind.value_or(cfg.bindAddress);
  g.port = cfg.tcp.port;
  if (a.port) {
    const int p = *a.port;
    if (p < 0 || p > 65535)
      throw UsageError("--port " + std::to_string(p) + " is out of range 0..65535");
    g.port = static_cast<uint16_t>(p);
  }
  if (a.workDir) g.workDir = *a.workDir;
}

void applyLeaseAndVersions(GaneshaOptions& g, const ServerConfig& cfg, std::ostream& out) {
  if (cfg.nfsd.leaseTime) {
    if (*cfg.nfsd.leaseTime > 180) {
      throw ConfigError(cfg.source + ": nfsd lease_time " + std::to_string(*cfg.nfsd.leaseTime) +
                        " s is above nfs-ganesha's limit of 180 s for serve");
    }
    g.leaseSeconds = *cfg.nfsd.leaseTime;
  }
  g.minorVersions.clear();
  if (cfg.nfsd.v40) g.minorVersions.push_back(0);
  if (cfg.nfsd.v41) g.minorVersions.push_back(1);
  if (cfg.nfsd.v42) g.minorVersions.push_back(2);
  if (g.minorVersions.empty()) {
    throw ConfigError(cfg.source +
                      ": nfsd versions enable no NFSv4 version; serve runs NFSv4 only "
                      "(4.0, 4.1, 4.2)");
  }
  if (cfg.nfsd.v3)
    out << "note: serve does not serve NFSv3 (versions lists 3); apply configures it for knfsd\n";
}

GaneshaClientSpec ganeshaClient(const ServerConfig& cfg, const ExportSpec& e, const ClientSpec& c) {
  // The rendered ganesha.conf has Kerberos off and SecType = sys: a
  // client that asks for another flavor would silently get sys.
  for (const std::string& flavor : c.sec) {
    if (flavor != "sys") {
      throw ConfigError(cfg.source + ":" + std::to_string(c.mark.line) + ":" +
                        std::to_string(c.mark.column) + ": export '" + e.path + "' client '" +
                        c.host + "' asks for sec=" + flavor +
                        "; serve (nfs-ganesha without Kerberos) serves sec=sys only");
    }
  }
  GaneshaClientSpec gc;
  gc.clients = c.host;
  gc.readOnly = c.readOnly;
  // From the options as knfsd reads them, so all_squash and anonuid=
  // given as options squash here too.
  gc.squash = c.effectiveSquash();
  gc.anonymousUid = c.anonymousId("anonuid");
  gc.anonymousGid = c.anonymousId("anongid");
  return gc;
}

void addGaneshaExports(GaneshaOptions& g, const ServerConfig& cfg, const HostPaths& paths) {
  uint16_t id = 1;
  for (const auto& e : cfg.exports) {
    GaneshaExportSpec s;
    s.path = paths.resolve(e.path);
    s.pseudo = e.pseudo;
    // Each client of the config becomes a CLIENT block, in the config's
    // order; a host no block matches gets no access (as with knfsd).
    for (const ClientSpec& c : e.clients) s.clients.push_back(ganeshaClient(cfg, e, c));
    s.exportId = id++;
    g.exports.push_back(s);
  }
}

void applyRdma(GaneshaOptions& g, const ServerConfig& cfg, std::ostream& out) {
  if (!cfg.rdma.enabled) return;
  if (ganeshaSupportsNfsRdma()) {
    g.rdmaPort = cfg.rdma.port;
  } else {
    out << "note: this nfs-ganesha build has no NFS/RDMA (no NFS_RDMA_Port key); serving TCP "
           "only\n";
  }
}

void printDryRun(const GaneshaOptions& g, std::ostream& out) {
  out << "Dry run: would start nfs-ganesha with this ganesha.conf (port "
      << (g.port ? std::to_string(g.port) : "<free>") << "):\n"
      << renderGaneshaConfig(
             g, g.port ? g.port : 2049,
             g.workDir.empty() ? fs::path("/tmp/<work-dir>") : fs::absolute(g.workDir));
}

// SIGINT and SIGTERM set gStopRequested while it lives; the old handlers
// come back when it goes.
class StopSignals {
 public:
  StopSignals() {
    gStopRequested = 0;
    struct sigaction sa {};
    sa.sa_handler = onStopSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &oldInt_);
    sigaction(SIGTERM, &sa, &oldTerm_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &oldInt_, nullptr);
    sigaction(SIGTERM, &oldTerm_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction oldInt_ {};
  struct sigaction oldTerm_ {};
};

std::string bracketed(const std::string& a) {
  return a.find(':') == std::string::npos ? a : "[" + a + "]";
}

void printExport(const GaneshaExportSpec& e, const std::vector<std::string>& local,
                 const GaneshaServer& server, std::ostream& out) {
  std::string who;
  for (const auto& c : e.clients)
    who += (who.empty() ? "" : ", ") + c.clients + (c.readOnly ? " ro" : " rw");
  out << "  export " << e.path.string() << " as " << e.pseudo << " (" << who << ")";
  // The first address admitted; when none is known to be, the first one.
  std::string via = local.front();
  bool refused = true;
  for (const std::string& addr : local) {
    const std::optional<bool> admitted = exportAdmits(e, addr);
    if (admitted == false) continue;
    refused = false;
    if (admitted == true) {
      via = addr;
      break;
    }
  }
  if (refused) {
    // Clients that are only a lab network would otherwise get a suggested
    // command that fails with a bare NFS4ERR_NOENT.
    out << "\n    note: a client on this host, connecting to " << via
        << ", is not among its clients, so nfs-ganesha hides the export from it (NFS4ERR_NOENT); "
           "add '- host: "
        << via << "' to its clients to try it here\n";
  } else {
    out << "   try: nfsrdma-client ls nfs://" << bracketed(via) << ":" << server.port() << e.pseudo
        << "\n";
  }
}

void printServing(const GaneshaServer& server, const GaneshaOptions& g, std::ostream& out) {
  out << "serving with nfs-ganesha pid " << server.pid() << " on " << bracketed(server.address())
      << ":" << server.port() << "\n";
  const std::vector<std::string> local = localClientAddresses(server.address());
  for (const auto& e : g.exports) printExport(e, local, server, out);
  out << "  log " << server.logPath().string() << "\nready; stop with Ctrl-C or SIGTERM\n"
      << std::flush;
}

int serve(const ServerRun& r) {
  const ServerConfig& cfg = *r.cfg;
  GaneshaOptions g;
  applyServeFlags(g, cfg, r.args);
  applyLeaseAndVersions(g, cfg, r.out);
  addGaneshaExports(g, cfg, r.paths);
  applyRdma(g, cfg, r.out);
  if (r.args.dryRun) {
    printDryRun(g, r.out);
    return tool::kExitSuccess;
  }
  g.notice = [&r](const std::string& line) { r.out << line << "\n" << std::flush; };
  const StopSignals signals;
  GaneshaServer server = GaneshaServer::start(g);
  printServing(server, g, r.out);
  const int status = server.waitUntilExitOr(gStopRequested);
  if (status != -1) {
    r.err << "nfs-ganesha exited on its own (wait status " << status << "); last log lines:\n"
          << tailOfFile(server.logPath(), 15);
    return tool::kExitFailure;
  }
  server.stop();
  r.out << "stopped\n" << std::flush;
  return tool::kExitSuccess;
}

int printDoctor(const ServerRun& r) {
  const HostState st = HostState::probe(r.paths);
  // Under --root no host tool runs: the staged runner would only record dcb.
  auto checks =
      runDoctor(r.paths, st, r.cfg ? &*r.cfg : nullptr, r.paths.isLiveHost() ? &r.runner : nullptr);
  r.out << renderDoctor(checks);
  return anyFailed(checks) ? tool::kExitFailure : tool::kExitSuccess;
}

int printPlan(const ServerRun& r) {
  const ServerConfig& cfg = *r.cfg;
  const HostState st = HostState::probe(r.paths);
  r.out << "profile " << cfg.profile << ": " << cfg.nfsd.threads << " nfsd threads";
  for (const auto& t : cfg.tuning)
    r.out << "; " << t.name << "=" << t.value << " (" << t.reason << ")";
  ServerPlan plan = computePlan(cfg, r.paths, st, NfsConfOverrides::List);
  for (auto& why : applyRefusals(plan, r.paths)) plan.refusals.push_back(std::move(why));
  r.out << "\n" << plan.render();
  if (plan.refusals.empty()) return tool::kExitSuccess;
  r.err << "nfsrdma-server: apply would refuse: " << plan.refusals.size() << " problem"
        << (plan.refusals.size() == 1 ? "" : "s") << " listed under \"Apply refuses\"\n";
  return tool::kExitFailure;
}

int printStatus(const ServerRun& r) {
  r.out << statusText(r.paths, HostState::probe(r.paths));
  return tool::kExitSuccess;
}

int applyCommand(const ServerRun& r) {
  applyConfig(*r.cfg, r.paths, r.runner, r.args.dryRun, r.out);
  return tool::kExitSuccess;
}

int rollbackCommand(const ServerRun& r) {
  return rollbackLastApply(r.paths, r.runner, r.args.dryRun, r.out) ? tool::kExitSuccess
                                                                    : tool::kExitFailure;
}

// Whether a command reads a CONFIG argument.
enum class ConfigArg { kNone, kOptional, kRequired };
struct ServerAction {
  ConfigArg config;
  int (*run)(const ServerRun&);
};

constexpr tool::Subcommand<ServerAction> kCommands[] = {
    {"doctor",
     "[CONFIG]",
     "check packages, modules, RDMA ports, nfsd, listener, exports; exit 1 on any FAIL",
     {ConfigArg::kOptional, printDoctor}},
    {"plan",
     "CONFIG",
     "print the changes apply would make, as a diff; change nothing; exit 1 when apply would "
     "refuse",
     {ConfigArg::kRequired, printPlan}},
    {"apply",
     "CONFIG",
     "make them (modules, files, exportfs, tuning, versions, lease/grace, ports, threads)",
     {ConfigArg::kRequired, applyCommand}},
    {"status", "", "what the kernel serves now", {ConfigArg::kNone, printStatus}},
    {"rollback",
     "",
     "restore the state before the first apply since the last rollback",
     {ConfigArg::kNone, rollbackCommand}},
    {"serve",
     "CONFIG",
     "run nfs-ganesha in the foreground with CONFIG's exports until SIGINT/SIGTERM\n"
     "[--port N (0: any free)] [--bind ADDR] [--work-dir DIR]",
     {ConfigArg::kRequired, serve}},
};

std::string usageText() {
  std::ostringstream o;
  o << "usage: nfsrdma-server [--root DIR] [--dry-run] [--allow-insecure] COMMAND [CONFIG]\n"
       "       nfsrdma-server --version   the version and commit of this build\n"
       "commands:\n";
  tool::printCommands(o, kCommands, 16);
  return o.str();
}

po::options_description serverOptions(ServerArgs& a) {
  po::options_description opts("options");
  opts.add_options()("help,h", po::bool_switch(&a.help), "this help")(
      "version", po::bool_switch(&a.version), "the version and commit of this build")(
      "root", po::value(&a.root)->default_value(a.root),
      "host root: every host path is read and written under DIR")(
      "dry-run", po::bool_switch(&a.dryRun), "show what would be done, change nothing")(
      "allow-insecure", po::bool_switch(&a.allowInsecure),
      "allow rw exports that give root to any host (no_root_squash, or anonuid=0/anongid=0, to "
      "'*', 0.0.0.0/0, ::/0, *.*)")("port", po::value<int>(), "serve: TCP port (0: any free port)")(
      "bind", po::value<std::string>(), "serve: bind address")(
      "work-dir", po::value<std::string>(),
      "serve: ganesha work directory, new, empty or one serve used (default: a temporary one)")(
      "command", po::value(&a.command), "subcommand")("config", po::value<std::string>(),
                                                      "YAML config");
  return opts;
}

template <class T>
std::optional<T> given(const po::variables_map& vm, const char* name) {
  if (vm.count(name) == 0) return std::nullopt;
  return vm[name].as<T>();
}

// Parse errors are usage errors.
ServerArgs parseServerArgs(const std::vector<std::string>& args) {
  ServerArgs a;
  const po::options_description opts = serverOptions(a);
  po::positional_options_description pos;
  pos.add("command", 1).add("config", 1);
  po::variables_map vm;
  tool::parseOrUsageError([&] {
    po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
    po::notify(vm);
  });
  a.config = given<std::string>(vm, "config");
  a.port = given<int>(vm, "port");
  a.bind = given<std::string>(vm, "bind");
  a.workDir = given<std::string>(vm, "work-dir");
  return a;
}

HostPaths hostRoot(const std::string& rootArg) {
  if (!fs::path(rootArg).is_absolute())
    throw UsageError("--root '" + rootArg + "' must be an absolute path");
  std::error_code ec;
  if (!fs::is_directory(rootArg, ec))
    throw UsageError("--root '" + rootArg + "' is not an existing directory");
  return HostPaths(rootArg);
}

// The command has the arguments it takes, and no others.
void checkArguments(const tool::Subcommand<ServerAction>& c, const ServerArgs& a) {
  const std::string cmd(c.name);
  if (c.action.config == ConfigArg::kRequired && !a.config)
    throw UsageError(cmd + " needs a CONFIG file (see configs/server.example.yaml)");
  if (c.action.config == ConfigArg::kNone && a.config)
    throw UsageError(cmd + " takes no CONFIG argument");
  if (cmd != "serve" && (a.port || a.bind || a.workDir)) {
    throw UsageError("--port, --bind and --work-dir apply to serve only");
  }
}

std::optional<ServerConfig> loadConfig(const ServerArgs& a, const HostPaths& paths) {
  std::optional<ServerConfig> cfg;
  if (a.config) {
    cfg = loadServerConfig(*a.config);
    // doctor reports what the host lacks as its checks instead of refusing the config.
    if (a.command != "doctor") validateOnHost(*cfg, paths, a.allowInsecure);
  }
  return cfg;
}

std::unique_ptr<CommandRunner> runnerFor(const HostPaths& paths) {
  if (paths.isLiveHost()) return std::make_unique<SystemCommandRunner>();
  return std::make_unique<StagedCommandRunner>(paths);
}

// Parse, check, load the config, run the command.
int runServerSteps(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const ServerArgs a = parseServerArgs(args);
  const bool version = a.version || tool::isVersionWord(a.command);  // "nfsrdma-server version"
  if (version && !a.help) {
    tool::printVersion(out, "nfsrdma-server");
    return tool::kExitSuccess;
  }
  if (a.help || a.command.empty() || tool::isHelpWord(a.command)) {
    const bool asked = a.help || tool::isHelpWord(a.command);  // "nfsrdma-server help"
    (asked ? out : err) << usageText();
    return asked ? tool::kExitSuccess : tool::kExitUsage;
  }
  const HostPaths paths = hostRoot(a.root);
  const tool::Subcommand<ServerAction>& command = tool::findSubcommand(kCommands, a.command);
  checkArguments(command, a);
  const std::optional<ServerConfig> cfg = loadConfig(a, paths);
  const std::unique_ptr<CommandRunner> runner = runnerFor(paths);
  return command.action.run({a, paths, cfg, *runner, out, err});
}

}  // namespace

int runServerTool(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return tool::runReportingErrors(
      "nfsrdma-server", err, [&] { return runServerSteps(args, out, err); }, usageText());
}

}  // namespace nfsrdma::server
