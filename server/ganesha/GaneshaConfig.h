// GaneshaConfig: what the embedded nfs-ganesha serves (exports, their
// clients, the listener, NFSv4 minor versions) and the ganesha.conf rendered
// from it. Rendering checks every value ganesha's config parser would
// mis-read or drop, and writes each client as ganesha reads it
// (GaneshaClients.h); exportAdmits says, from the same terms, which client
// addresses an export admits.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

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

}  // namespace nfsrdma::server
