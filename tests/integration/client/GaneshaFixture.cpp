#include "tests/integration/client/GaneshaFixture.h"

#include <unistd.h>

namespace nfsrdma::testing {
namespace {
GaneshaEnvironment* g_env = nullptr;
}  // namespace

bool requireReal() {
  const char* v = std::getenv("NFSRDMA_REQUIRE_REAL");
  return v != nullptr && std::string(v) == "1";
}

GaneshaEnvironment& GaneshaEnvironment::get() {
  return *g_env;
}

void GaneshaEnvironment::SetUp() {
  if (auto why = server::GaneshaServer::unavailableReason()) {
    unavailable_ = *why;
    return;
  }
  root_ = std::filesystem::temp_directory_path() / ("nfsrdma-itest-" + std::to_string(::getpid()));
  exportDir_ = root_ / "rw";
  readOnlyDir_ = root_ / "ro";
  std::filesystem::create_directories(exportDir_);
  std::filesystem::create_directories(readOnlyDir_);
  server::GaneshaOptions o;
  o.exports.push_back({exportDir_, "/export", false, false, 1});
  o.exports.push_back({readOnlyDir_, "/ro", true, false, 2});
  o.leaseSeconds = kLeaseSeconds;
  o.workDir = root_ / "ganesha";
  try {
    server_.emplace(server::GaneshaServer::start(o));
  } catch (const std::exception& e) {
    unavailable_ = std::string("nfs-ganesha did not start: ") + e.what();
  }
}

void GaneshaEnvironment::TearDown() {
  if (server_) server_->stop();
  std::error_code ec;
  if (!root_.empty()) std::filesystem::remove_all(root_, ec);
}

ClientOptions GaneshaEnvironment::options(const std::string& exportPath) const {
  ClientOptions o;
  o.host = "127.0.0.1";
  o.port = server_->port();
  o.exportPath = exportPath;
  o.timeout = std::chrono::seconds(20);
  return o;
}

}  // namespace nfsrdma::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  nfsrdma::testing::g_env = new nfsrdma::testing::GaneshaEnvironment;
  ::testing::AddGlobalTestEnvironment(nfsrdma::testing::g_env);  // gtest owns it
  return RUN_ALL_TESTS();
}
