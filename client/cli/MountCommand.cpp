// nfsrdma-client mount / umount: plans the kernel client's NFS mount
// (proto=rdma by default), prints the commands, an /etc/fstab line and a
// Kubernetes PersistentVolume + StorageClass, and with --run executes them.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "client/cli/CliCommands.h"
#include "client/mount/MountHost.h"
#include "client/mount/MountPlan.h"
#include "util/ToolCli.h"

namespace po = boost::program_options;

namespace nfsrdma::cli {
namespace {

// argv goes to execvp as it is: no shell and no re-splitting, so a path or option with spaces or
// quotes stays one argument.
int runCommand(const std::vector<std::string>& words) {
  std::vector<std::string> copy = words;
  std::vector<char*> argv;
  for (auto& w : copy) argv.push_back(w.data());
  argv.push_back(nullptr);
  // What was printed comes before the child's output, also when stdout is a pipe.
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    ::execvp(argv[0], argv.data());
    std::perror(argv[0]);
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The command line of mount or umount, parsed.
struct MountArgs {
  mount::MountRequest request;
  bool help = false;
  bool run = false;
  std::filesystem::path root = "/";
};

// Words that the options fill in before they become the request.
struct MountWords {
  std::string source;  // SERVER:/export
  std::string port;
  std::uint32_t rsize = 0;
  std::uint32_t wsize = 0;
};

po::options_description mountOptions(MountArgs& p, MountWords& w, const char* what) {
  po::options_description opts(std::string("nfsrdma-client ") + what + " options");
  opts.add_options()("help,h", po::bool_switch(&p.help), "show this help")(
      "proto", po::value(&p.request.proto)->default_value("rdma"),
      "rdma, tcp, or both (NFSv3 only: two mounts, <mountpoint>-rdma and -tcp)")(
      "port", po::value(&w.port), "server port (rdma default 20049)")(
      "vers", po::value(&p.request.vers)->default_value("4.2"), "NFS version")(
      "rsize", po::value(&w.rsize), "read size in bytes")("wsize", po::value(&w.wsize),
                                                          "write size in bytes")(
      "nconnect", po::value<std::uint32_t>(),
      "connections per mount (where the kernel supports it)")(
      "option,o", po::value(&p.request.extraOptions),
      "one extra mount option (repeat -o for more)")("run", po::bool_switch(&p.run),
                                                     "execute the commands (default: print them)")(
      "root", po::value(&p.root), "read /proc and /sys below this directory (tests)");
  return opts;
}

std::string synopsis(const char* what) {
  return std::string("usage: nfsrdma-client ") + what + " SERVER:/export MOUNTPOINT [options]\n";
}

// Boost's errors are usage errors.
po::variables_map storeWords(int argc, char** argv, const po::options_description& opts,
                             MountArgs& p, MountWords& w) {
  po::options_description hidden;
  hidden.add_options()("source", po::value(&w.source))("mountpoint",
                                                       po::value(&p.request.mountPoint));
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("source", 1).add("mountpoint", 1);
  po::variables_map vm;
  tool::parseOrUsageError([&] {
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    po::notify(vm);
  });
  return vm;
}

// The words as a request: server and export, port, sizes, nconnect.
void toRequest(const MountWords& w, const po::variables_map& vm, MountArgs& p) {
  if (w.source.empty() || p.request.mountPoint.empty())
    throw tool::UsageError("needs SERVER:/export and MOUNTPOINT");
  const auto colon = w.source.find(":/");
  if (colon == std::string::npos) {
    throw tool::UsageError("'" + w.source + "': expected SERVER:/export");
  }
  p.request.server = w.source.substr(0, colon);
  p.request.exportPath = w.source.substr(colon + 1);
  if (!w.port.empty()) {
    const long v = std::strtol(w.port.c_str(), nullptr, 10);
    if (v < 1 || v > 65535 || std::to_string(v) != w.port) {
      throw tool::UsageError("--port " + w.port + ": expected 1 to 65535");
    }
    p.request.port = static_cast<std::uint16_t>(v);
  }
  if (w.rsize) p.request.rsize = w.rsize;
  if (w.wsize) p.request.wsize = w.wsize;
  // Given at all (even 0) goes to MountPlan, which checks 1..16.
  if (vm.count("nconnect") != 0) p.request.nconnect = vm["nconnect"].as<std::uint32_t>();
}

// mount's or umount's run over its parsed arguments. Errors are
// "nfsrdma-client: mount: message", as the client's other lines name the
// operation after the tool; a usage error adds the synopsis, --help the options.
int runParsed(int argc, char** argv, const char* what, int (*run)(const MountArgs&)) {
  MountArgs p;
  MountWords w;
  const po::options_description opts = mountOptions(p, w, what);
  return tool::runReportingErrors(
      std::string("nfsrdma-client: ") + what, std::cerr,
      [&] {
        const po::variables_map vm = storeWords(argc, argv, opts, p, w);
        if (p.help) {
          std::cout << synopsis(what) << opts;
          return tool::kExitSuccess;
        }
        toRequest(w, vm, p);
        return run(p);
      },
      synopsis(what));
}

int mountParsed(const MountArgs& p) {
  const mount::MountPlan plan = mount::planMount(p.request, mount::readHostFacts(p.root));
  for (const auto& n : plan.notes) std::printf("note: %s\n", n.c_str());
  for (const auto& m : plan.mounts) {
    std::printf("# %s\n%s\n", m.proto.c_str(), m.command.c_str());
  }
  std::printf("\n# /etc/fstab\n");
  for (const auto& m : plan.mounts) std::printf("%s\n", m.fstabLine.c_str());
  std::printf("\n# Kubernetes\n%s", plan.kubernetesYaml.c_str());
  for (const auto& pr : plan.problems) {
    std::fprintf(stderr, "nfsrdma-client: mount: %s\n", pr.c_str());
  }
  if (!plan.problems.empty()) return tool::kExitFailure;
  if (!p.run) return tool::kExitSuccess;
  for (const auto& m : plan.mounts) {
    std::filesystem::create_directories(m.mountPoint);
    if (int rc = runCommand(m.argv); rc != 0) {
      std::fprintf(stderr, "nfsrdma-client: mount: '%s' exited with %d\n", m.command.c_str(), rc);
      return tool::kExitFailure;
    }
  }
  return tool::kExitSuccess;
}

int umountParsed(const MountArgs& p) {
  const auto unmounts = mount::planUnmount(p.request);
  for (const auto& u : unmounts) std::printf("%s\n", u.command.c_str());
  if (!p.run) return tool::kExitSuccess;
  // Checked for all before any is unmounted, so a wrong SERVER:/export unmounts nothing.
  const std::string mounts = mount::readHostFacts(p.root).mounts;
  bool refused = false;
  for (const auto& u : unmounts) {
    if (const auto problem = mount::unmountProblem(u, mounts)) {
      std::fprintf(stderr, "nfsrdma-client: umount: %s\n", problem->c_str());
      refused = true;
    }
  }
  if (refused) return tool::kExitFailure;
  int status = tool::kExitSuccess;
  for (const auto& u : unmounts) {
    if (runCommand(u.argv) != 0) {
      std::fprintf(stderr, "nfsrdma-client: umount: '%s' failed\n", u.command.c_str());
      status = tool::kExitFailure;
    }
  }
  return status;
}

}  // namespace

int runMountCommand(int argc, char** argv) {
  return runParsed(argc, argv, "mount", mountParsed);
}

int runUmountCommand(int argc, char** argv) {
  return runParsed(argc, argv, "umount", umountParsed);
}

}  // namespace nfsrdma::cli
