// One nfs-ganesha for a whole test binary: started on 127.0.0.1 at a free
// port with two exports, /export (read-write) and /ro (read-only), and
// stopped at the end. Without ganesha the tests skip with the reason, or fail
// when NFSRDMA_REQUIRE_REAL=1 (CI), so a green CI run means they really ran.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "client/Client.h"
#include "server/ganesha/GaneshaServer.h"

namespace nfsrdma::testing {

class GaneshaEnvironment : public ::testing::Environment {
 public:
  static constexpr unsigned kLeaseSeconds = 6;

  void SetUp() override;
  void TearDown() override;

  static GaneshaEnvironment& get();
  // Empty when ganesha runs; otherwise why it does not.
  const std::string& unavailable() const { return unavailable_; }
  const std::filesystem::path& exportDir() const { return exportDir_; }
  const std::filesystem::path& readOnlyDir() const { return readOnlyDir_; }
  std::uint16_t port() const { return server_->port(); }
  pid_t pid() const { return server_->pid(); }
  ClientOptions options(const std::string& exportPath = "/export") const;

 private:
  std::filesystem::path root_;
  std::filesystem::path exportDir_;
  std::filesystem::path readOnlyDir_;
  std::optional<server::GaneshaServer> server_;
  std::string unavailable_;
};

bool requireReal();

}  // namespace nfsrdma::testing

// Skips (or fails under NFSRDMA_REQUIRE_REAL=1) when ganesha is not running.
#define NFSRDMA_NEED_GANESHA()                                                               \
  do {                                                                                       \
    const auto& why = ::nfsrdma::testing::GaneshaEnvironment::get().unavailable();           \
    if (!why.empty()) {                                                                      \
      if (::nfsrdma::testing::requireReal()) FAIL() << "NFSRDMA_REQUIRE_REAL=1 but " << why; \
      GTEST_SKIP() << why;                                                                   \
    }                                                                                        \
  } while (false)
