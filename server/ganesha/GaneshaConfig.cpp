// GaneshaConfig: ganesha.conf rendered from GaneshaOptions, after checking
// every value ganesha's config parser would mis-read or drop; and which
// clients an export admits, decided from the terms its CLIENT blocks carry.
#include "server/ganesha/GaneshaConfig.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <set>
#include <sstream>
#include <stdexcept>

#include "server/ganesha/GaneshaClients.h"
#include "server/ganesha/GaneshaWorkDir.h"

namespace nfsrdma::server {
namespace fs = std::filesystem;
namespace {

// A string that ganesha's config lexer reads back unchanged inside double
// quotes: no quote, backslash, newline or other control character.
void requireConfigSafe(const std::string& what, const std::string& value) {
  for (char c : value) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\' || u < 0x20 || u == 0x7f) {
      throw std::runtime_error(what + " '" + value +
                               "' contains a quote, backslash or control character, "
                               "which ganesha.conf cannot carry");
    }
  }
}

void requireValidSettings(const GaneshaOptions& opts, uint16_t port, const fs::path& workDir) {
  if (opts.exports.empty())
    throw std::runtime_error("ganesha: no exports given; at least one is required");
  if (!isNumericAddress(opts.bindAddress)) {
    throw std::runtime_error("ganesha: bind address '" + opts.bindAddress +
                             "' is not a numeric IPv4 or IPv6 address");
  }
  if (port == 0)
    throw std::runtime_error("ganesha: NFS port 0 cannot be rendered; pick a port first");
  if (opts.leaseSeconds < 1 || opts.leaseSeconds > 180) {
    throw std::runtime_error("ganesha: lease time " + std::to_string(opts.leaseSeconds) +
                             " s is outside ganesha's range 1..180");
  }
  if (!workDir.is_absolute()) {
    throw std::runtime_error("ganesha: work directory '" + workDir.string() +
                             "' must be an absolute path");
  }
  requireConfigSafe("ganesha: work directory", (workDir / kGaneshaRecoveryDirName).string());
}

void requireValidExports(const std::vector<GaneshaExportSpec>& exports) {
  std::set<uint16_t> ids;
  std::set<std::string> pseudos;
  for (const auto& e : exports) {
    const std::string where = "ganesha export '" + e.path.string() + "'";
    if (!e.path.is_absolute()) throw std::runtime_error(where + ": path must be absolute");
    requireConfigSafe(where + ": path", e.path.string());
    if (e.pseudo.size() < 2 || e.pseudo.front() != '/' || e.pseudo.back() == '/') {
      throw std::runtime_error(
          where + ": pseudo path '" + e.pseudo +
          "' must be absolute, below '/', without a trailing '/' (e.g. /export)");
    }
    requireConfigSafe(where + ": pseudo path", e.pseudo);
    if (e.exportId == 0)
      throw std::runtime_error(where + ": export id 0 is reserved for ganesha's pseudo root");
    if (!ids.insert(e.exportId).second) {
      throw std::runtime_error(where + ": duplicate export id " + std::to_string(e.exportId));
    }
    if (!pseudos.insert(e.pseudo).second) {
      throw std::runtime_error(where + ": duplicate pseudo path '" + e.pseudo + "'");
    }
  }
}

std::string clientWhere(const GaneshaExportSpec& e, const GaneshaClientSpec& cl) {
  return "ganesha export '" + e.path.string() + "': client '" + cl.clients + "'";
}

// Every client has terms ganesha reads (GaneshaClients.h), before anything
// is looked up.
void requireValidClients(const std::vector<GaneshaExportSpec>& exports) {
  for (const auto& e : exports) {
    for (const auto& cl : e.clients) {
      try {
        (void)ganeshaClientTerms(cl.clients);
      } catch (const std::runtime_error& why) {
        throw std::runtime_error(clientWhere(e, cl) + " " + why.what());
      }
    }
  }
}

// A CLIENT block's Clients line: its terms, or the addresses of a name
// ganesha's config cannot carry, with the name in a comment.
std::string clientsLine(const GaneshaExportSpec& e, const GaneshaClientSpec& cl) {
  const std::optional<std::vector<std::string>> terms = ganeshaClientTerms(cl.clients);
  std::vector<std::string> written;
  try {
    written = terms ? *terms : lookUpGaneshaClient(cl.clients);
  } catch (const std::runtime_error& why) {
    throw std::runtime_error(clientWhere(e, cl) + ": " + why.what());
  }
  std::string line = "    Clients = ";
  for (std::size_t i = 0; i < written.size(); ++i) line += (i == 0 ? "" : ", ") + written[i];
  line += ";";
  if (!terms)
    line += "  # " + cl.clients + ", resolved by nfsrdma (ganesha's config cannot carry the name)";
  return line + "\n";
}

// Minor_Versions' value: each version once, in order.
std::string minorVersionList(const std::vector<unsigned>& minorVersions) {
  if (minorVersions.empty()) throw std::runtime_error("ganesha: no NFSv4 minor version to serve");
  std::string minors;
  for (unsigned m : std::set<unsigned>(minorVersions.begin(), minorVersions.end())) {
    if (m > 2)
      throw std::runtime_error("ganesha: NFSv4 minor version " + std::to_string(m) +
                               " (expected 0, 1 or 2)");
    minors += (minors.empty() ? "" : ", ") + std::to_string(m);
  }
  return minors;
}

const char* squashName(Squash q) {
  return q == Squash::NoRoot ? "No_Root_Squash" : q == Squash::All ? "All_Squash" : "Root_Squash";
}

void renderCoreParams(std::ostream& c, const GaneshaOptions& opts, uint16_t port) {
  c << "NFS_CORE_PARAM {\n"
    << "  Protocols = 4;\n"
    << "  NFS_Port = " << port << ";\n";
  if (opts.rdmaPort != 0) c << "  NFS_RDMA_Port = " << opts.rdmaPort << ";\n";
  c << "  Bind_addr = " << opts.bindAddress << ";\n"
    << "  Enable_NLM = false;\n"
    << "  Enable_RQUOTA = false;\n"
    << "  Enable_UDP = false;\n"
    << "}\n";
}

void renderNfsv4(std::ostream& c, const GaneshaOptions& opts, const std::string& minors,
                 const fs::path& workDir) {
  c << "NFSV4 {\n"
    << "  Graceless = true;\n"
    << "  Lease_Lifetime = " << opts.leaseSeconds << ";\n"
    << "  Minor_Versions = " << minors << ";\n"
    << "  RecoveryBackend = fs;\n"
    << "  RecoveryRoot = \"" << (workDir / kGaneshaRecoveryDirName).string() << "\";\n"
    << "}\n";
}

void renderClient(std::ostream& c, const GaneshaExportSpec& e, const GaneshaClientSpec& cl) {
  c << "  CLIENT {\n"
    << clientsLine(e, cl) << "    Access_Type = " << (cl.readOnly ? "RO" : "RW") << ";\n"
    << "    Squash = " << squashName(cl.squash) << ";\n";
  if (cl.anonymousUid) c << "    Anonymous_Uid = " << *cl.anonymousUid << ";\n";
  if (cl.anonymousGid) c << "    Anonymous_Gid = " << *cl.anonymousGid << ";\n";
  c << "  }\n";
}

void renderExport(std::ostream& c, const GaneshaExportSpec& e, const GaneshaOptions& opts) {
  c << "EXPORT {\n"
    << "  Export_Id = " << e.exportId << ";\n"
    << "  Path = \"" << e.path.string() << "\";\n"
    << "  Pseudo = \"" << e.pseudo << "\";\n"
    << "  Access_Type = "
    << (!e.clients.empty() ? "None"
        : e.readOnly       ? "RO"
                           : "RW")
    << ";\n"
    << "  Squash = " << (!e.clients.empty() || e.rootSquash ? "Root_Squash" : "No_Root_Squash")
    << ";\n"
    << "  SecType = sys;\n"
    << "  Protocols = 4;\n"
    << "  Transports = " << (opts.rdmaPort != 0 ? "TCP, RDMA" : "TCP") << ";\n";
  if (opts.maxIoBytes != 0)
    c << "  MaxRead = " << opts.maxIoBytes << ";\n  MaxWrite = " << opts.maxIoBytes << ";\n";
  c << "  FSAL { Name = VFS; }\n";
  for (const auto& cl : e.clients) renderClient(c, e, cl);
  c << "}\n";
}

}  // namespace

std::string renderGaneshaConfig(const GaneshaOptions& opts, uint16_t port,
                                const fs::path& workDir) {
  requireValidSettings(opts, port, workDir);
  requireValidExports(opts.exports);
  requireValidClients(opts.exports);
  const std::string minors = minorVersionList(opts.minorVersions);
  std::ostringstream c;
  c << "# Rendered by nfsrdma (server/ganesha/GaneshaConfig.cpp) on every start; edits are lost.\n";
  renderCoreParams(c, opts, port);
  renderNfsv4(c, opts, minors, workDir);
  c << "NFS_KRB5 { Active_krb5 = false; }\n";
  for (const auto& e : opts.exports) renderExport(c, e, opts);
  return c.str();
}

std::optional<bool> exportAdmits(const GaneshaExportSpec& exp, const std::string& address) {
  if (!isNumericAddress(address)) return std::nullopt;
  for (const GaneshaClientSpec& c : exp.clients) {
    const std::optional<bool> m = ganeshaClientAdmits(c.clients, address);
    if (!m || *m) return m;
  }
  return exp.clients.empty();
}

std::vector<std::string> localClientAddresses(const std::string& listenAddress) {
  in_addr v4{};
  in6_addr v6{};
  if (::inet_pton(AF_INET, listenAddress.c_str(), &v4) == 1 && v4.s_addr == htonl(INADDR_ANY))
    return {"127.0.0.1"};
  if (::inet_pton(AF_INET6, listenAddress.c_str(), &v6) == 1 &&
      std::memcmp(&v6, &in6addr_any, sizeof v6) == 0)
    return {"127.0.0.1", "::1"};
  return {listenAddress};
}

}  // namespace nfsrdma::server
