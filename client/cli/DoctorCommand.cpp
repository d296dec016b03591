// nfsrdma-client doctor [SERVER]: the client host's checklist for NFS over
// RDMA (rpcrdma, the NFS mounts' options and read-ahead, session slots, the
// RDMA slot table), the fabric checks of its RDMA ports, and with SERVER,
// which local address and RDMA port the route to it leaves from. PASS,
// WARN or FAIL per line with the command that fixes it; exit 1 on a FAIL.
#include <sys/socket.h>

#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>

#include "client/cli/CliCommands.h"
#include "client/transport/NumaPlacement.h"
#include "hostcheck/ClientChecks.h"
#include "hostcheck/FabricChecks.h"
#include "util/ErrnoText.h"
#include "util/SocketAddress.h"
#include "util/ToolCli.h"
#include "util/UniqueFd.h"

namespace po = boost::program_options;

namespace nfsrdma::cli {
namespace {

constexpr std::uint16_t kRdmaPort = 20049;

struct DoctorArgs {
  bool help = false;
  std::string server;
  std::filesystem::path root = "/";
};

// The local address the kernel's route to server leaves from: a UDP
// socket's connect picks it and sends nothing. The live routing table also
// under --root (a staged tree has none). Sets why when there is none.
std::string routeSource(const std::string& server, std::string& why) {
  const util::ResolvedAddresses r = util::resolveAddresses(server, kRdmaPort, false);
  if (r.addresses.empty()) {
    why = "cannot resolve " + server + ": " + r.error;
    return "";
  }
  const util::SocketAddress& a = r.addresses.front();
  UniqueFd fd(::socket(a.family(), SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd || ::connect(fd.get(), a.get(), a.length) != 0) {
    why = util::errnoMessage("no route to " + a.toString());
    return "";
  }
  std::string local = transport::localAddressOf(fd.get());
  if (local.empty()) why = "no local address for the route to " + a.toString();
  return local;
}

int doctor(const DoctorArgs& a) {
  const hostcheck::HostRoot root(a.root);
  const auto ports = hostcheck::readRdmaPorts(root);
  hostcheck::CheckList out;
  hostcheck::clientHostChecks(root, out);
  if (ports.empty()) {
    out.warn("RDMA devices", "none in /sys/class/infiniband: only TCP reaches the server",
             "install the NIC's RDMA driver, or for testing: modprobe rdma_rxe && rdma link add "
             "rxe0 type rxe netdev <eth>");
  }
  hostcheck::SystemCommandRunner runner;
  hostcheck::fabricChecks(root, ports, {true, root.isLiveHost() ? &runner : nullptr}, out);
  if (!a.server.empty()) {
    std::string why;
    const std::string local = routeSource(a.server, why);
    hostcheck::checkRouteToServer(ports, a.server, local, why, out);
  }
  std::cout << hostcheck::renderDoctor(out.checks()) << std::flush;
  return hostcheck::anyFailed(out.checks()) ? tool::kExitFailure : tool::kExitSuccess;
}

const char* const kSynopsis = "usage: nfsrdma-client doctor [SERVER] [--root DIR]\n";

}  // namespace

int runDoctorCommand(int argc, char** argv) {
  DoctorArgs a;
  po::options_description opts("nfsrdma-client doctor options");
  opts.add_options()("help,h", po::bool_switch(&a.help), "show this help")(
      "root", po::value(&a.root), "read /proc and /sys below this directory (tests)");
  po::options_description all;
  all.add(opts).add_options()("server", po::value(&a.server));
  po::positional_options_description pos;
  pos.add("server", 1);
  return tool::runReportingErrors(
      "nfsrdma-client: doctor", std::cerr,
      [&] {
        tool::parseOrUsageError([&] {
          po::variables_map vm;
          po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
          po::notify(vm);
        });
        if (a.help) {
          std::cout << kSynopsis << opts;
          return tool::kExitSuccess;
        }
        if (!a.root.is_absolute())
          throw tool::UsageError("--root " + a.root.string() + ": expected an absolute path");
        return doctor(a);
      },
      kSynopsis);
}

}  // namespace nfsrdma::cli
