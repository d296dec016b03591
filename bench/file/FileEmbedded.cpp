#include "bench/file/FileEmbedded.h"

#include <stdexcept>

namespace nfsrdma::bench {

namespace {

// Before the directory is made: without ganesha there is nothing to export.
const std::filesystem::path& ganeshaAvailable(const std::filesystem::path& parent) {
  if (auto why = server::GaneshaServer::unavailableReason()) {
    throw std::runtime_error("cannot start the embedded nfs-ganesha: " + *why +
                             " (run scripts/install-deps.sh, or give --target)");
  }
  return parent;
}

}  // namespace

EmbeddedServer::EmbeddedServer(const std::filesystem::path& parent)
    : exportDir_(ganeshaAvailable(parent), "nfsrdma-bench") {
  server::GaneshaOptions go;
  server::GaneshaExportSpec spec;
  spec.path = exportDir_.path();
  spec.pseudo = "/export";
  go.exports.push_back(spec);
  server_.emplace(server::GaneshaServer::start(go));
}

EmbeddedServer::~EmbeddedServer() {
  if (server_) server_->stop();
}

std::string EmbeddedServer::url() const {
  return "nfs://" + server_->address() + ":" + std::to_string(server_->port()) + "/export";
}

TargetSpec EmbeddedServer::localTarget() const {
  return TargetSpec::parse("local", "path:" + exportDir_.path().string());
}

// The export is a directory here: its free space is checked before a layout,
// and an interrupted run removes its files without the server.
TargetSpec EmbeddedServer::nfsTarget(const std::string& proto) const {
  TargetSpec t = TargetSpec::parse("nfs-" + proto, "nfs:" + url() + "?proto=" + proto);
  t.localDir = exportDir_.path().string();
  return t;
}

TargetSpec EmbeddedServer::libnfsTarget() const {
  TargetSpec t = TargetSpec::parse("libnfs", "libnfs:" + url());
  t.localDir = exportDir_.path().string();
  return t;
}

std::string EmbeddedServer::description() const {
  return "nfs-ganesha on " + server_->address() + ":" + std::to_string(server_->port()) +
         " (started for this run), exporting " + exportDir_.path().string() + " as /export";
}

}  // namespace nfsrdma::bench
