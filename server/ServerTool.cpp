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

#include "server/AtomicFile.h"
#include "server/CommandRunner.h"
#include "server/ganesha/GaneshaServer.h"
#include "server/HostPaths.h"
#include "server/HostState.h"
#include "server/PlanExecutor.h"
#include "server/ServerConfig.h"
#include "server/ServerDoctor.h"
#include "server/ServerPlan.h"

namespace nfsrdma::server {
namespace po = boost::program_options;
namespace fs = std::filesystem;
namespace {

constexpr const char* kUsage =
    "usage: nfsrdma-server [--root DIR] [--dry-run] [--allow-insecure] COMMAND [CONFIG]\n"
    "commands:\n"
    "  doctor [CONFIG]  check packages, modules, RDMA ports, nfsd, listener, exports; exit 1 on "
    "any FAIL\n"
    "  plan CONFIG      print the changes apply would make, as a diff; change nothing; exit 1 "
    "when apply would refuse\n"
    "  apply CONFIG     make them (modules, files, exportfs, tuning, versions, lease/grace, ports, "
    "threads)\n"
    "  status           what the kernel serves now\n"
    "  rollback         restore the state before the first apply since the last rollback\n"
    "  serve CONFIG     run nfs-ganesha in the foreground with CONFIG's exports until "
    "SIGINT/SIGTERM\n"
    "                   [--port N (0: any free)] [--bind ADDR] [--work-dir DIR]\n";

volatile std::sig_atomic_t gStopRequested = 0;
extern "C" void onStopSignal(int) {
  gStopRequested = 1;
}

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

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
  if (!st.kernelExports) {
    o << "  (not available)\n";
  } else {
    std::istringstream in(*st.kernelExports);
    bool any = false;
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      o << "  " << line << "\n";
      any = true;
    }
    if (!any) o << "  (none)\n";
  }
  // The kernel's export cache fills on demand; etab is what exportfs handed it.
  o << "exports given to the kernel by exportfs (/var/lib/nfs/etab):\n";
  if (auto etab = readHostFile(paths, "/var/lib/nfs/etab")) {
    std::istringstream in(*etab);
    bool any = false;
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      o << "  " << line << "\n";
      any = true;
    }
    if (!any) o << "  (none)\n";
  } else {
    o << "  (not available)\n";
  }
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
void applyServeFlags(GaneshaOptions& g, const ServerConfig& cfg, const po::variables_map& vm) {
  g.bindAddress = vm.count("bind") ? vm["bind"].as<std::string>() : cfg.bindAddress;
  g.port = cfg.tcp.port;
  if (vm.count("port")) {
    const int p = vm["port"].as<int>();
    if (p < 0 || p > 65535)
      throw UsageError("--port " + std::to_string(p) + " is out of range 0..65535");
    g.port = static_cast<uint16_t>(p);
  }
  if (vm.count("work-dir")) g.workDir = vm["work-dir"].as<std::string>();
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
    throw ConfigError(cfg.source + ": nfsd versions enable no NFSv4 version; serve runs NFSv4 only "
                      "(4.0, 4.1, 4.2)");
  }
  if (cfg.nfsd.v3) out << "note: serve does not serve NFSv3 (versions lists 3); apply configures it for knfsd\n";
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
  const Squash squash = c.effectiveSquash();
  gc.squash = squash == Squash::NoRoot ? GaneshaSquash::NoRoot
              : squash == Squash::All  ? GaneshaSquash::All
                                       : GaneshaSquash::Root;
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

int serve(const ServerConfig& cfg, const HostPaths& paths, const po::variables_map& vm, bool dryRun,
          std::ostream& out, std::ostream& err) {
  GaneshaOptions g;
  applyServeFlags(g, cfg, vm);
  applyLeaseAndVersions(g, cfg, out);
  addGaneshaExports(g, cfg, paths);
  applyRdma(g, cfg, out);
  if (dryRun) {
    printDryRun(g, out);
    return 0;
  }
  const StopSignals signals;
  GaneshaServer server = GaneshaServer::start(g);
  printServing(server, g, out);
  const int status = server.waitUntilExitOr(gStopRequested);
  if (status != -1) {
    err << "nfs-ganesha exited on its own (wait status " << status << "); last log lines:\n"
        << tailOfFile(server.logPath(), 15);
    return 1;
  }
  server.stop();
  out << "stopped\n" << std::flush;
  return 0;
}

// Parse errors are usage errors.
po::variables_map parseArgs(const std::vector<std::string>& args,
                            const po::options_description& opts) {
  po::positional_options_description pos;
  pos.add("command", 1).add("config", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return vm;
}

HostPaths hostRoot(const po::variables_map& vm) {
  const std::string rootArg = vm["root"].as<std::string>();
  if (!fs::path(rootArg).is_absolute())
    throw UsageError("--root '" + rootArg + "' must be an absolute path");
  std::error_code ec;
  if (!fs::is_directory(rootArg, ec))
    throw UsageError("--root '" + rootArg + "' is not an existing directory");
  return HostPaths(rootArg);
}

// `cmd` is a command and has the arguments it takes, and no others.
void checkArguments(const std::string& cmd, const po::variables_map& vm) {
  const bool needsConfig = cmd == "plan" || cmd == "apply" || cmd == "serve";
  const bool takesConfig = needsConfig || cmd == "doctor";
  if (cmd != "doctor" && cmd != "plan" && cmd != "apply" && cmd != "status" && cmd != "rollback" &&
      cmd != "serve") {
    throw UsageError("unknown command '" + cmd +
                     "' (expected doctor, plan, apply, status, rollback or serve)");
  }
  if (needsConfig && !vm.count("config"))
    throw UsageError(cmd + " needs a CONFIG file (see configs/server.example.yaml)");
  if (!takesConfig && vm.count("config")) throw UsageError(cmd + " takes no CONFIG argument");
  if (cmd != "serve" && (vm.count("port") || vm.count("bind") || vm.count("work-dir"))) {
    throw UsageError("--port, --bind and --work-dir apply to serve only");
  }
}

std::optional<ServerConfig> loadConfig(const po::variables_map& vm, const std::string& cmd,
                                       const HostPaths& paths, bool allowInsecure) {
  std::optional<ServerConfig> cfg;
  if (vm.count("config")) {
    cfg = loadServerConfig(vm["config"].as<std::string>());
    if (cmd != "doctor") validateOnHost(*cfg, paths, allowInsecure);
  }
  return cfg;
}

std::unique_ptr<CommandRunner> runnerFor(const HostPaths& paths) {
  if (paths.isLiveHost()) return std::make_unique<SystemCommandRunner>();
  return std::make_unique<StagedCommandRunner>(paths);
}

int printDoctor(const HostPaths& paths, const std::optional<ServerConfig>& cfg, std::ostream& out) {
  const HostState st = HostState::probe(paths);
  auto checks = runDoctor(paths, st, cfg ? &*cfg : nullptr);
  out << renderDoctor(checks);
  return anyFailed(checks) ? 1 : 0;
}

int printPlan(const ServerConfig& cfg, const HostPaths& paths, std::ostream& out) {
  const HostState st = HostState::probe(paths);
  out << "profile " << cfg.profile << ": " << cfg.nfsd.threads << " nfsd threads";
  for (const auto& t : cfg.tuning)
    out << "; " << t.name << "=" << t.value << " (" << t.reason << ")";
  const ServerPlan plan = computePlan(cfg, paths, st, NfsConfOverrides::List);
  out << "\n" << plan.render();
  return plan.overrides.empty() ? 0 : 1;  // apply would refuse
}

}  // namespace

int runServerTool(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description opts("options");
  opts.add_options()("help,h", "this help")(
      "root", po::value<std::string>()->default_value("/"),
      "host root: every host path is read and written under DIR")(
      "dry-run", "show what would be done, change nothing")(
      "allow-insecure", "allow rw exports that give root to any host (no_root_squash, or anonuid=0/anongid=0, to '*', 0.0.0.0/0, ::/0, *.*)")(
      "port", po::value<int>(), "serve: TCP port (0: any free port)")(
      "bind", po::value<std::string>(), "serve: bind address")(
      "work-dir", po::value<std::string>(),
      "serve: ganesha work directory (default: a temporary one)")(
      "command", po::value<std::string>(), "subcommand")("config", po::value<std::string>(),
                                                         "YAML config");
  try {
    const po::variables_map vm = parseArgs(args, opts);
    if (vm.count("help") || !vm.count("command")) {
      (vm.count("help") ? out : err) << kUsage;
      return vm.count("help") ? 0 : 2;
    }
    const std::string cmd = vm["command"].as<std::string>();
    const bool dryRun = vm.count("dry-run") > 0;
    const bool allowInsecure = vm.count("allow-insecure") > 0;
    const HostPaths paths = hostRoot(vm);
    checkArguments(cmd, vm);
    const std::optional<ServerConfig> cfg = loadConfig(vm, cmd, paths, allowInsecure);
    const std::unique_ptr<CommandRunner> runner = runnerFor(paths);

    if (cmd == "doctor") return printDoctor(paths, cfg, out);
    if (cmd == "status") {
      out << statusText(paths, HostState::probe(paths));
      return 0;
    }
    if (cmd == "plan") return printPlan(*cfg, paths, out);
    if (cmd == "apply") {
      applyConfig(*cfg, paths, *runner, dryRun, out);
      return 0;
    }
    if (cmd == "rollback") return rollbackLastApply(paths, *runner, dryRun, out) ? 0 : 1;
    return serve(*cfg, paths, vm, dryRun, out, err);
  } catch (const UsageError& e) {
    err << "nfsrdma-server: " << e.what() << "\n" << kUsage;
    return 2;
  } catch (const std::exception& e) {
    err << "nfsrdma-server: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace nfsrdma::server
