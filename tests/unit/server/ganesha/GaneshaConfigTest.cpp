// renderGaneshaConfig: the ganesha.conf keys the embedded server relies on
// (NFSv4.0 kept for libnfs, recovery state inside the work dir, TCP only
// unless RDMA is asked for) and its refusals.
#include <gtest/gtest.h>

#include "server/ganesha/GaneshaClients.h"
#include "server/ganesha/GaneshaConfig.h"

using nfsrdma::server::GaneshaExportSpec;
using nfsrdma::server::GaneshaOptions;
using nfsrdma::server::renderGaneshaConfig;

namespace {

GaneshaOptions twoExports() {
  GaneshaOptions o;
  o.exports.push_back(GaneshaExportSpec{"/srv/a", "/export"});
  GaneshaExportSpec b{"/srv/b c", "/ro", true, true, 7};
  o.exports.push_back(b);
  return o;
}

std::string renderError(const GaneshaOptions& o, uint16_t port = 2049, const char* work = "/w") {
  try {
    renderGaneshaConfig(o, port, work);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(GaneshaConfig, RendersCoreV4AndExports) {
  const std::string c = renderGaneshaConfig(twoExports(), 20490, "/run/work");
  for (const char* line :
       {"  NFS_Port = 20490;\n", "  Bind_addr = 127.0.0.1;\n", "  Protocols = 4;\n",
        "  Enable_NLM = false;\n", "  Enable_UDP = false;\n", "  Minor_Versions = 0, 1, 2;\n",
        "  Lease_Lifetime = 20;\n", "  Graceless = true;\n", "  RecoveryBackend = fs;\n",
        "  RecoveryRoot = \"/run/work/recovery\";\n", "NFS_KRB5 { Active_krb5 = false; }\n",
        "  Export_Id = 1;\n  Path = \"/srv/a\";\n  Pseudo = \"/export\";\n  Access_Type = RW;\n  "
        "Squash = No_Root_Squash;\n",
        "  Export_Id = 7;\n  Path = \"/srv/b c\";\n  Pseudo = \"/ro\";\n  Access_Type = RO;\n  "
        "Squash = Root_Squash;\n",
        "  Transports = TCP;\n", "  FSAL { Name = VFS; }\n"}) {
    EXPECT_NE(c.find(line), std::string::npos) << "missing:\n" << line << "in:\n" << c;
  }
  EXPECT_EQ(c.find("RDMA"), std::string::npos);
}

// serve gives each client of the config its own CLIENT block: a read-only
// client must not get RW because another client of the export has it, and a
// host the config does not list gets nothing (export-level Access_Type None).
TEST(GaneshaConfig, ClientBlocksAndMinorVersions) {
  GaneshaOptions o;
  GaneshaExportSpec e{"/srv/a", "/export"};
  e.clients = {{"10.0.0.0/24", false, nfsrdma::server::Squash::NoRoot},
               {"*.lab.example", true, nfsrdma::server::Squash::All},
               {"@compute", true, nfsrdma::server::Squash::Root}};
  o.exports.push_back(e);
  o.minorVersions = {2, 1};
  const std::string c = renderGaneshaConfig(o, 2049, "/w");
  EXPECT_NE(c.find("  Minor_Versions = 1, 2;\n"), std::string::npos) << c;
  EXPECT_NE(c.find("  Access_Type = None;\n  Squash = Root_Squash;\n"), std::string::npos) << c;
  EXPECT_NE(c.find("  CLIENT {\n    Clients = 10.0.0.0/24;\n    Access_Type = RW;\n    Squash = "
                   "No_Root_Squash;\n  }\n"
                   "  CLIENT {\n    Clients = *.lab.example;\n    Access_Type = RO;\n    Squash = "
                   "All_Squash;\n  }\n"
                   "  CLIENT {\n    Clients = @compute;\n    Access_Type = RO;\n    Squash = "
                   "Root_Squash;\n  }\n}\n"),
            std::string::npos)
      << c;

  GaneshaOptions bad = o;
  bad.exports[0].clients[0].clients = "10.0.0.1; Access_Type = RW";
  EXPECT_EQ(renderError(bad),
            "ganesha export '/srv/a': client '10.0.0.1; Access_Type = RW' is not a host, "
            "network, wildcard or @netgroup ganesha.conf can carry");
  bad = o;
  bad.minorVersions = {};
  EXPECT_EQ(renderError(bad), "ganesha: no NFSv4 minor version to serve");
  bad.minorVersions = {3};
  EXPECT_EQ(renderError(bad), "ganesha: NFSv4 minor version 3 (expected 0, 1 or 2)");
}

TEST(GaneshaConfig, RdmaKeysOnlyWhenAskedFor) {
  auto o = twoExports();
  o.rdmaPort = 20049;
  const std::string c = renderGaneshaConfig(o, 2049, "/w");
  EXPECT_NE(c.find("  NFS_RDMA_Port = 20049;\n"), std::string::npos);
  EXPECT_NE(c.find("  Transports = TCP, RDMA;\n"), std::string::npos);
}

TEST(GaneshaConfig, Refusals) {
  GaneshaOptions none;
  EXPECT_EQ(renderError(none), "ganesha: no exports given; at least one is required");
  auto o = twoExports();
  o.exports[1].exportId = 1;
  EXPECT_EQ(renderError(o), "ganesha export '/srv/b c': duplicate export id 1");
  o = twoExports();
  o.exports[1].pseudo = "/export";
  EXPECT_EQ(renderError(o), "ganesha export '/srv/b c': duplicate pseudo path '/export'");
  o = twoExports();
  o.exports[0].pseudo = "export";
  EXPECT_NE(renderError(o).find("pseudo path 'export' must be absolute"), std::string::npos);
  o = twoExports();
  o.exports[0].path = "/srv/\"quoted\"";
  EXPECT_NE(renderError(o).find("contains a quote, backslash or control character"),
            std::string::npos);
  o = twoExports();
  o.exports[0].exportId = 0;
  EXPECT_NE(renderError(o).find("export id 0 is reserved"), std::string::npos);
  o = twoExports();
  o.bindAddress = "localhost";
  EXPECT_EQ(renderError(o),
            "ganesha: bind address 'localhost' is not a numeric IPv4 or IPv6 address");
  o = twoExports();
  o.leaseSeconds = 600;
  EXPECT_EQ(renderError(o), "ganesha: lease time 600 s is outside ganesha's range 1..180");
  EXPECT_EQ(renderError(twoExports(), 0),
            "ganesha: NFS port 0 cannot be rendered; pick a port first");
  EXPECT_EQ(renderError(twoExports(), 2049, "rel/dir"),
            "ganesha: work directory 'rel/dir' must be an absolute path");
}

TEST(GaneshaConfig, MaxIoBytesSetsEveryExportsMaxReadAndMaxWrite) {
  GaneshaOptions o = twoExports();
  EXPECT_EQ(renderGaneshaConfig(o, 2049, "/w").find("MaxRead"), std::string::npos);
  o.maxIoBytes = 262144;
  const std::string c = renderGaneshaConfig(o, 2049, "/w");
  const std::string limits = "  MaxRead = 262144;\n  MaxWrite = 262144;\n  FSAL { Name = VFS; }\n";
  const auto first = c.find(limits);
  ASSERT_NE(first, std::string::npos) << c;
  EXPECT_NE(c.find(limits, first + 1), std::string::npos) << "the second export too:\n" << c;
}

// exportAdmits decides what `serve` tells a user on this host: a command to
// try, or why that command would get NFS4ERR_NOENT. The first matching
// block decides; a name, wildcard or netgroup in the way means "cannot tell".
TEST(GaneshaConfig, ExportAdmitsFollowsTheFirstMatchingClientBlock) {
  using nfsrdma::server::exportAdmits;
  using nfsrdma::server::Squash;
  GaneshaExportSpec e{"/srv/a", "/export"};
  EXPECT_EQ(exportAdmits(e, "127.0.0.1"), true);  // no blocks: everyone

  e.clients = {{"192.168.100.0/24", false, Squash::Root}};
  EXPECT_EQ(exportAdmits(e, "127.0.0.1"), false);
  EXPECT_EQ(exportAdmits(e, "192.168.100.7"), true);
  EXPECT_EQ(exportAdmits(e, "192.168.101.7"), false);  // one bit past the prefix
  EXPECT_EQ(exportAdmits(e, "::1"), false);            // another family
  EXPECT_EQ(exportAdmits(e, "not-an-address"), std::nullopt);

  e.clients = {{"10.0.0.0/9", false, Squash::Root}};
  EXPECT_EQ(exportAdmits(e, "10.127.255.255"), true);
  EXPECT_EQ(exportAdmits(e, "10.128.0.0"), false);
  e.clients = {{"0.0.0.0/0", false, Squash::Root}};
  EXPECT_EQ(exportAdmits(e, "203.0.113.9"), true);

  e.clients = {{"10.0.0.0/24", false, Squash::Root}, {"127.0.0.1", true, Squash::Root}};
  EXPECT_EQ(exportAdmits(e, "127.0.0.1"), true);
  EXPECT_EQ(exportAdmits(e, "127.0.0.2"), false);
  e.clients = {{"fd00::/8", false, Squash::Root}};
  EXPECT_EQ(exportAdmits(e, "fd12::5"), true);
  EXPECT_EQ(exportAdmits(e, "::1"), false);

  e.clients = {{"@compute", false, Squash::Root}, {"*", false, Squash::Root}};
  EXPECT_EQ(exportAdmits(e, "127.0.0.1"), std::nullopt);
  e.clients = {{"*", false, Squash::Root}, {"@compute", false, Squash::Root}};
  EXPECT_EQ(exportAdmits(e, "127.0.0.1"), true);
  e.clients = {{"*.lab.example", false, Squash::Root}};
  EXPECT_EQ(exportAdmits(e, "127.0.0.1"), std::nullopt);
  // A dual-stack listener sees IPv4 clients as ::ffff:a.b.c.d.
  e.clients = {{"127.0.0.0/8", false, Squash::Root}};
  EXPECT_EQ(exportAdmits(e, "::ffff:127.0.0.1"), true);
  EXPECT_EQ(exportAdmits(e, "::ffff:10.0.0.1"), false);
  e.clients = {{"10.0.0.0/33", false, Squash::Root}};
  EXPECT_EQ(exportAdmits(e, "10.0.0.1"), std::nullopt);  // not a network ganesha would take
}

// Where serve looks for this host among an export's clients.
TEST(GaneshaConfig, LocalClientAddressesOfAListener) {
  using nfsrdma::server::localClientAddresses;
  EXPECT_EQ(localClientAddresses("127.0.0.1"), std::vector<std::string>{"127.0.0.1"});
  EXPECT_EQ(localClientAddresses("192.168.100.5"), std::vector<std::string>{"192.168.100.5"});
  EXPECT_EQ(localClientAddresses("0.0.0.0"), std::vector<std::string>{"127.0.0.1"});
  EXPECT_EQ(localClientAddresses("::"), (std::vector<std::string>{"127.0.0.1", "::1"}));
  EXPECT_EQ(localClientAddresses("0::0"), (std::vector<std::string>{"127.0.0.1", "::1"}));
  EXPECT_EQ(localClientAddresses("fd00::1"), std::vector<std::string>{"fd00::1"});
}

// Each client form the config accepts, written as nfs-ganesha's config lexer
// reads it (src/config_parsing/conf_lex.l): no /0, no dotted netmask, no
// prefix above /99, no bare 0.0.0.0 (every host to ganesha), no ?name (a
// host name to ganesha), no [^...]; a name the lexer cannot read is looked
// up (nullopt here).
TEST(GaneshaConfig, ClientTermsAreWhatGaneshaReadsForEachForm) {
  using nfsrdma::server::ganeshaClientTerms;
  using Terms = std::vector<std::string>;
  const std::vector<std::pair<std::string, Terms>> forms = {
      {"*", {"*"}},
      {"127.0.0.1", {"127.0.0.1"}},
      {"0.0.0.0", {"0.0.0.0/32"}},
      {"127.0.0.0/8", {"127.0.0.0/8"}},
      {"127.0.0.1/8", {"127.0.0.0/8"}},
      {"127.0.0.0/008", {"127.0.0.0/8"}},
      {"10.1.2.3/32", {"10.1.2.3"}},
      {"127.0.0.0/255.0.0.0", {"127.0.0.0/8"}},
      {"192.168.4.0/255.255.252.0", {"192.168.4.0/22"}},
      {"10.0.0.0/0", {"0.0.0.0/1", "128.0.0.0/1"}},
      {"10.0.0.0/0.0.0.0", {"0.0.0.0/1", "128.0.0.0/1"}},
      {"10.9.9.9/255.255.255.255", {"10.9.9.9"}},
      {"::1", {"::1"}},
      {"0:0:0:0:0:0:0:1", {"::1"}},
      {"FD00::1/64", {"fd00::/64"}},
      {"fd00::/99", {"fd00::/99"}},
      {"::1/128", {"::1"}},
      {"::/0", {"::/1", "8000::/1"}},
      {"::ffff:127.0.0.1", {"127.0.0.1"}},
      {"::ffff:127.0.0.0/104", {"127.0.0.0/8"}},
      {"::ffff:0.0.0.0/96", {"0.0.0.0/1", "128.0.0.0/1"}},
      {"::ffff:0.0.0.0", {"0.0.0.0/32"}},
      {"@compute", {"@compute"}},
      {"@_lab.rack-1", {"@_lab.rack-1"}},
      {"localhost", {"localhost"}},
      {"_srv.lab-1.example", {"_srv.lab-1.example"}},
      {"*.lab.example", {"*.lab.example"}},
      {"local*", {"local*"}},
      {"localhos?", {"localhos?"}},
      {"?ocalhost", {"[a-zA-Z0-9._-]ocalhost"}},
      {"?", {"[a-zA-Z0-9._-]"}},
      {"?*", {"?*"}},
      {"[l]ocalhost", {"[l]ocalhost"}},
      {"[^x]ocalhost", {"[!x]ocalhost"}},
      {"node[0-9][0-9].lab", {"node[0-9][0-9].lab"}},
  };
  for (const auto& [client, terms] : forms) {
    EXPECT_EQ(ganeshaClientTerms(client), terms) << client;
  }
  for (const char* lookedUp :
       {"1host.example", "3com.com", "on", "YES", "off", "True", "no", "false"}) {
    EXPECT_EQ(ganeshaClientTerms(lookedUp), std::nullopt) << lookedUp;
  }
}

// What no ganesha term can say is refused with the client named, before
// ganesha would drop its CLIENT block.
TEST(GaneshaConfig, ClientsGaneshaCannotReadAreRefusedWithTheReason) {
  auto o = twoExports();
  const auto refusal = [&](const std::string& client) {
    o.exports[0].clients = {{client, true, nfsrdma::server::Squash::Root}};
    return renderError(o);
  };
  const std::string where = "ganesha export '/srv/a': client ";
  EXPECT_EQ(refusal("fd00::/112"), where +
                                       "'fd00::/112' is an IPv6 network of prefix /112, which "
                                       "nfs-ganesha's config cannot carry (it "
                                       "reads prefixes /1 to /99); list its hosts one by one, or "
                                       "write a shorter prefix if the wider "
                                       "network may use the export");
  EXPECT_EQ(refusal("@1rack"),
            where +
                "'@1rack' is a netgroup name nfs-ganesha's config cannot carry (it reads "
                "names that start with a letter or '_' and hold letters, digits, '.', '_' "
                "and '-')");
  const std::string longGroup = "@" + std::string(64, 'g');
  EXPECT_EQ(
      refusal(longGroup),
      where + "'" + longGroup + "' is longer than the 64 bytes nfs-ganesha takes for a netgroup");
  EXPECT_EQ(refusal("[!a]x"),
            where +
                "'[!a]x' has the class [!a]: exportfs reads its '!' as a character and "
                "nfs-ganesha as \"not\"; write '^' for \"not\"");
  EXPECT_EQ(refusal("[a*]x"),
            where +
                "'[a*]x' has the class [a*], which nfs-ganesha's config cannot carry (classes "
                "of letters, digits, '.', '_' and '-', '^' first for \"not\")");
  const std::string longWildcard = "*" + std::string(64, 'w');
  EXPECT_EQ(refusal(longWildcard),
            where + "'" + longWildcard +
                "' is longer than the 64 bytes nfs-ganesha takes for a wildcard");
  EXPECT_EQ(refusal("?" + std::string(60, 'q')),
            where + "'?" + std::string(60, 'q') +
                "' is longer than the 64 bytes nfs-ganesha takes for a wildcard (written as "
                "[a-zA-Z0-9._-]" +
                std::string(60, 'q') + ")");
  EXPECT_EQ(refusal("10.0.0.0/255.0.255.0"),
            where + "'10.0.0.0/255.0.255.0' has netmask 255.0.255.0, which is not contiguous");
  EXPECT_EQ(refusal("10.0.0.0/33"),
            where + "'10.0.0.0/33' has prefix /33, beyond the address's 32 bits");
  for (const char* junk : {"10.1", "10.0.0.0/x", "host/24", "a b", ""}) {
    EXPECT_EQ(refusal(junk),
              where + "'" + junk +
                  "' is not a host, network, wildcard or @netgroup ganesha.conf can carry")
        << junk;
  }
}

// The dotted netmask of the issue, and 0.0.0.0, in the CLIENT block ganesha
// gets.
TEST(GaneshaConfig, ClientBlocksCarryTheTermsGaneshaReads) {
  GaneshaOptions o;
  GaneshaExportSpec e{"/srv/a", "/export"};
  e.clients = {{"127.0.0.0/255.0.0.0", true, nfsrdma::server::Squash::Root},
               {"0.0.0.0", false, nfsrdma::server::Squash::Root},
               {"::/0", true, nfsrdma::server::Squash::All}};
  o.exports.push_back(e);
  const std::string c = renderGaneshaConfig(o, 2049, "/w");
  EXPECT_NE(c.find("  CLIENT {\n    Clients = 127.0.0.0/8;\n    Access_Type = RO;\n"),
            std::string::npos)
      << c;
  EXPECT_NE(c.find("  CLIENT {\n    Clients = 0.0.0.0/32;\n    Access_Type = RW;\n"),
            std::string::npos)
      << c;
  EXPECT_NE(c.find("  CLIENT {\n    Clients = ::/1, 8000::/1;\n    Access_Type = RO;\n"),
            std::string::npos)
      << c;
}

// exportAdmits reads the rendered terms: a netmask is a network, 0.0.0.0 is
// one address, an IPv4-mapped network is IPv4.
TEST(GaneshaConfig, ExportAdmitsDecidesEveryNumericForm) {
  using nfsrdma::server::exportAdmits;
  using nfsrdma::server::Squash;
  GaneshaExportSpec e{"/srv/a", "/export"};
  e.clients = {{"127.0.0.0/255.0.0.0", false, Squash::Root}};
  EXPECT_EQ(exportAdmits(e, "127.0.0.1"), true);
  EXPECT_EQ(exportAdmits(e, "128.0.0.1"), false);
  e.clients = {{"0.0.0.0", false, Squash::Root}};
  EXPECT_EQ(exportAdmits(e, "127.0.0.1"), false);
  e.clients = {{"10.0.0.0/0", false, Squash::Root}};
  EXPECT_EQ(exportAdmits(e, "203.0.113.9"), true);
  EXPECT_EQ(exportAdmits(e, "::1"), false);
  e.clients = {{"::ffff:127.0.0.0/104", false, Squash::Root}};
  EXPECT_EQ(exportAdmits(e, "127.0.0.1"), true);
  e.clients = {{"::/0", false, Squash::Root}};
  EXPECT_EQ(exportAdmits(e, "::1"), true);
  EXPECT_EQ(exportAdmits(e, "127.0.0.1"), false);
  e.clients = {{"1host.example", false, Squash::Root}, {"*", false, Squash::Root}};
  EXPECT_EQ(exportAdmits(e, "127.0.0.1"), std::nullopt);  // looked up when rendered, not here
}
