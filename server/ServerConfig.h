// ServerConfig: the declarative description of an NFS-over-RDMA server, read
// from YAML (configs/server.example.yaml documents every key). Parsing is
// strict: an unknown key, a wrong type, a value out of range or two
// contradicting options is an error at "file:line:column", so a typo never
// silently becomes a default. Checks that need the host (does the export
// path exist, is there such an RDMA device) are in ConfigHostChecks.h.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "server/ganesha/Squash.h"

namespace nfsrdma::server {

// An error in the config; what() starts with "file:line:column: ".
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SourceMark {
  int line = 0;  // 1-based; 0 when unknown
  int column = 0;
};

// The kernel's limits on the values apply writes: the config is checked
// against them, and so is rollback's undo record (UndoRecord.h).
struct KernelLimit {
  const char* name;
  std::uint64_t min, max;
};
// svc_rdma sysctls: extra1..extra2 of each entry of svcrdma_parm_table
// (net/sunrpc/xprtrdma/svc_rdma.c), outside of which proc_dointvec_minmax
// answers EINVAL. max_req_size runs from RPCRDMA_DEF_INLINE_THRESH to
// RPCRDMA_MAX_INLINE_THRESH (include/linux/sunrpc/svc_rdma.h).
inline constexpr KernelLimit kSvcRdmaLimits[] = {{"max_requests", 4, 16384},
                                                 {"max_req_size", 4096, 65536},
                                                 {"max_outbound_read_requests", 1, 255}};
// nfsd threads: nfsd clamps a larger count to NFSD_MAXSERVS (fs/nfsd/nfsd.h).
inline constexpr std::uint64_t kNfsdMaxThreads = 8192;
// nfsv4leasetime and nfsv4gracetime answer EINVAL outside 10..3600 s
// (fs/nfsd/nfsctl.c, __nfsd4_write_time).
inline constexpr KernelLimit kNfsv4TimeLimits = {"seconds", 10, 3600};

// One client of one export: exports(5) options in structured form.
struct ClientSpec {
  std::string host = "*";
  bool readOnly = false;
  bool sync = true;
  Squash squash = Squash::Root;
  std::vector<std::string> sec{"sys"};
  std::optional<std::string> fsid;
  bool crossmnt = false;
  bool subtreeCheck = false;
  bool insecure = false;  // RDMA clients connect from unprivileged ports: they need insecure
  std::vector<std::string> extraOptions;  // further exports(5) flags, e.g. no_wdelay
  SourceMark mark;

  // exports(5) options in a fixed order: access, sync, squash, security,
  // subtree, crossmnt, fsid, sec, then the extra ones.
  std::vector<std::string> exportOptions() const;
  // The squashing exportOptions() asks for, as knfsd reads it: all_squash
  // (the squash key or an option) wins over the root setting.
  Squash effectiveSquash() const;
  // The value of anonuid= or anongid= (key without '=') in the options.
  std::optional<std::uint32_t> anonymousId(const std::string& key) const;
};

struct ExportSpec {
  std::string path;    // absolute host path
  std::string pseudo;  // NFSv4 path for `serve`; defaults to path
  std::vector<ClientSpec> clients;
  SourceMark mark;
};

struct TransportSpec {
  bool enabled = true;
  uint16_t port = 0;
};

struct NfsdSpec {
  unsigned threads = 16;
  bool v3 = false, v40 = true, v41 = true, v42 = true;
  std::optional<unsigned> leaseTime;  // seconds
  std::optional<unsigned> graceTime;
  // Some NFSv4 minor version is served: what nfs.conf's vers4 and the
  // kernel's "+4" say.
  bool anyV4() const { return v40 || v41 || v42; }
};

struct TuningSetting {
  std::string name;  // svc_rdma sysctl under /proc/sys/sunrpc/svc_rdma
  uint64_t value = 0;
  std::string reason;  // one line: why this value
};

struct ServerConfig {
  std::string source;  // file name, for messages
  std::string profile = "default";
  std::vector<ExportSpec> exports;
  std::string bindAddress = "0.0.0.0";
  TransportSpec tcp{true, 2049};
  TransportSpec rdma{true, 20049};
  NfsdSpec nfsd;
  std::string rdmaDevice;  // e.g. mlx5_0, rxe0; empty: any
  std::string rdmaNetdev;  // e.g. eth0; empty: any
  SourceMark deviceMark, netdevMark;
  std::vector<TuningSetting> tuning;  // profile values, overridden by explicit tuning keys
};

// Parses YAML text. Throws ConfigError ("source:line:column: message").
ServerConfig parseServerConfig(const std::string& text, const std::string& source);
// Reads and parses a file; a missing or unreadable file, a directory, a
// FIFO or device, and a file over 1 MiB are ConfigErrors too (nothing is
// read from them).
ServerConfig loadServerConfig(const std::filesystem::path& file);

// The tuning values of a profile ("default", "throughput", "latency") with a
// reason each; throws std::invalid_argument for an unknown profile.
std::vector<TuningSetting> profileTuning(const std::string& profile);
unsigned profileThreads(const std::string& profile);

}  // namespace nfsrdma::server
