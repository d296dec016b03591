// The embedded default of the file benchmark: nfs-ganesha started on
// 127.0.0.1 (server::GaneshaServer, the server component's embedded server)
// exporting a fresh directory on the local disk. The directory is under
// /var/tmp by default, not /tmp, which is often tmpfs: the `local` column
// must measure a disk, and O_DIRECT needs a real file system. The directory
// is a RunDirectory: what killed runs left there goes at the next start.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "bench/file/RunDirectory.h"
#include "bench/file/engines/Engine.h"
#include "server/ganesha/GaneshaServer.h"

namespace nfsrdma::bench {

class EmbeddedServer {
 public:
  // Starts ganesha exporting a new directory below parent,
  // nfsrdma-bench-PID (after sweeping those of dead runs there); throws
  // std::runtime_error with the reason when ganesha is unavailable.
  explicit EmbeddedServer(const std::filesystem::path& parent = "/var/tmp");
  ~EmbeddedServer();  // stops ganesha, removes the directory
  EmbeddedServer(const EmbeddedServer&) = delete;
  EmbeddedServer& operator=(const EmbeddedServer&) = delete;

  const std::filesystem::path& exportDir() const { return exportDir_.path(); }
  std::string url() const;         // nfs://127.0.0.1:PORT/export
  TargetSpec localTarget() const;  // "local": path engine on the export directory
  TargetSpec nfsTarget(const std::string& proto) const;  // "nfs-tcp" / "nfs-rdma"
  TargetSpec libnfsTarget() const;                       // "libnfs"
  std::string description() const;

 private:
  RunDirectory exportDir_;  // outlives the server
  std::optional<server::GaneshaServer> server_;
};

}  // namespace nfsrdma::bench
