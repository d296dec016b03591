// Validation of every value nfsrdma-server writes, by the rules of its
// consumer (exports(5)/exportfs, nfs.conf, the kernel's sysctls). The checks
// against the host are in ConfigHostChecksTest, the bounds of the config
// file in ConfigReaderTest.
#include <gtest/gtest.h>

#include "server/ExportsFile.h"
#include "server/ServerConfig.h"
#include "server/ServerPlan.h"
#include "tests/unit/server/StagedHost.h"
#include "tests/unit/server/ToolRunner.h"

using nfsrdma::server::ConfigError;
using nfsrdma::server::ExportsFile;
using nfsrdma::server::parseServerConfig;
using nfsrdma::server::renderOwnExports;
using nfsrdma::server::testing::oneClient;
using nfsrdma::server::testing::runTool;
using nfsrdma::server::testing::StagedHost;

namespace {

std::string errorOf(const std::string& yaml) {
  try {
    parseServerConfig(yaml, "cfg.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}

}  // namespace

// exports(5) "Machine Name Formats", one of each; written as given.
TEST(ClientSpecs, EveryExportsFormIsAcceptedAndWrittenVerbatim) {
  for (const std::string host :
       {"10.0.0.0/255.255.255.0", "10.0.0.0/24", "192.168.1.7", "fe80::/64", "fe80::1", "::1",
        "2001:db8::/32", "*.example.com", "@trusted", "@lab-net.2", "host-1.example.com",
        "node?.lab", "node[0-9].lab", "localhost", "*", "10.0.0.0/32", "fe80::/128",
        // exportfs hands names to the resolver, and /etc/hosts and AD names have '_'.
        "my_host", "dc_01.corp.example.com", "_gateway", "build_*.lab"}) {
    SCOPED_TRACE(host);
    EXPECT_EQ(errorOf(oneClient(host)), "(no error)");
    EXPECT_NE(
        renderOwnExports(parseServerConfig(oneClient(host), "cfg.yaml")).find(" " + host + "("),
        std::string::npos);
  }
}

TEST(ClientSpecs, FsidSpellingsExportfsAcceptsPass) {
  for (const std::string fsid :
       {"0x1f", "0X1F", "010", "0", "root", "4294967295", "8c8e2b1a-4f3e-4d2a-9c1b-0123456789ab",
        "8c8e2b1a4f3e4d2a9c1b0123456789ab"}) {
    SCOPED_TRACE(fsid);
    EXPECT_EQ(errorOf(oneClient("10.0.0.0/24", "fsid: '" + fsid + "'")), "(no error)");
  }
}

TEST(ClientSpecs, UuidFsidsAreComparedByTheirDigits) {
  const std::string yaml =
      "exports:\n  - path: /srv/nfsrdma/data\n    clients: [{host: h1, fsid: "
      "8c8e2b1a-4f3e-4d2a-9c1b-0123456789ab}]\n  - path: /srv/nfsrdma/scratch\n    clients: "
      "[{host: h2, fsid: 8C8E2B1A4F3E4D2A9C1B0123456789AB}]\n";
  EXPECT_NE(errorOf(yaml).find("duplicate fsid=8C8E2B1A4F3E4D2A9C1B0123456789AB"),
            std::string::npos)
      << errorOf(yaml);
}

// The squash key's default is not something the user wrote: an option
// saying otherwise decides, as it would for exportfs (the last one wins).
TEST(ClientOptions, AnOptionOverridesAKeysDefault) {
  const std::string text = renderOwnExports(parseServerConfig(
      oneClient("10.0.0.0/24", "options: [rw, sync, insecure, no_root_squash]"), "cfg.yaml"));
  EXPECT_NE(text.find("/srv/nfsrdma/data 10.0.0.0/24(rw,sync,no_root_squash,insecure,"
                      "no_subtree_check,sec=sys)"),
            std::string::npos)
      << text;
  EXPECT_EQ(count(text, "root_squash"), 1u) << text;
  const std::string async =
      renderOwnExports(parseServerConfig(oneClient("h1", "options: [async]"), "cfg.yaml"));
  EXPECT_NE(async.find(" h1(rw,async,root_squash,no_subtree_check,sec=sys)"), std::string::npos)
      << async;
}

// Long input is shown once, cut to its first 80 characters and its length.
TEST(Messages, LongInputIsEchoedOnceAndTruncated) {
  const std::string path = "/srv/" + std::string(200000, 'a');
  StagedHost h;
  h.write("cfg.yaml", "exports:\n  - path: " + path + "\n    clients: [{host: h1}]\n");
  auto r = runTool({"--root", h.root.string(), "apply", (h.root / "cfg.yaml").string()});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(count(r.err, "(200005 bytes)"), 1u) << r.err.substr(0, 500);
  EXPECT_NE(r.err.find(path.substr(0, 80) + "... (200005 bytes)"), std::string::npos);
  EXPECT_LT(r.err.size(), 400u);
}

TEST(Messages, ControlCharactersAreShownEscaped) {
  const std::string err = errorOf(oneClient(std::string("a\x1b[2Jb")));
  EXPECT_NE(err.find("a\\x1b[2Jb"), std::string::npos) << err;
  EXPECT_EQ(err.find('\x1b'), std::string::npos);
}

TEST(ExportPaths, BlanksAreQuotedAndReadBackAsWritten) {
  StagedHost h;
  h.mkdir("srv/my data");
  const std::string yaml = "exports:\n  - path: '/srv/my data'\n    clients: [{host: h1}]\n";
  h.write("cfg.yaml", yaml);
  auto r = runTool({"--root", h.root.string(), "plan", (h.root / "cfg.yaml").string()});
  EXPECT_EQ(r.status, 0) << r.err;
  const std::string text = renderOwnExports(parseServerConfig(yaml, "cfg.yaml"));
  EXPECT_NE(text.find("\"/srv/my data\" h1("), std::string::npos) << text;
  EXPECT_EQ(ExportsFile::parse(text, "exports").entries.at(0).path, "/srv/my data");
}

TEST(Tuning, TheKernelsOwnLimitsPass) {
  const std::string yaml = oneClient("h1") +
                           "tuning:\n  max_requests: 16384\n  max_req_size: 65536\n"
                           "  max_outbound_read_requests: 255\n";
  EXPECT_EQ(errorOf(yaml), "(no error)");
  EXPECT_EQ(errorOf(oneClient("h1") + "tuning:\n  max_requests: 4\n  max_req_size: 4096\n"
                                      "  max_outbound_read_requests: 1\n"),
            "(no error)");
}

// The pure rules, one line each, as the config reader and the exports
// parser call them.
TEST(Rules, AdmitsEveryHostOnlyForWorldSpellings) {
  using nfsrdma::server::admitsEveryHost;
  for (const char* world : {"*", "0.0.0.0/0", "::/0", "10.0.0.0/0", "1.2.3.4/0.0.0.0", "*.*", "?*"})
    EXPECT_TRUE(admitsEveryHost(world)) << world;
  for (const char* narrow : {"10.0.0.0/8", "0.0.0.0/1", "::/1", "*.example.com", "?", "@all",
                             "host", "10.0.0.0/128.0.0.0"})
    EXPECT_FALSE(admitsEveryHost(narrow)) << narrow;
}

// exportfs classifies a client as client_gettype (support/export/client.c)
// does: "gss/..." first, then whichever of a wildcard byte or '/' comes
// first. The message names the rule of that class, not an address's.
TEST(Rules, AClientIsCheckedByTheClassExportfsGivesIt) {
  using nfsrdma::server::checkExportClient;
  for (const char* gss : {"gss/krb5", "gss/krb5i", "gss/krb5p", "gss/"}) {
    EXPECT_EQ(checkExportClient(gss).rfind("'gss/' names exports(5)'s RPCSEC_GSS pseudo-client", 0),
              0u)
        << gss << ": " << checkExportClient(gss);
  }
  EXPECT_EQ(checkExportClient("*.example.com/24"),
            "'/' is not allowed in a host name (host names are dot-separated labels of 1..63 "
            "letters, digits, '-' and '_' (RFC 1123, plus the '_' of /etc/hosts and Active "
            "Directory names), with the wildcards '*', '?' and [classes] of exports(5))");
  EXPECT_EQ(checkExportClient("10.0.0.*/24").rfind("'/' is not allowed in a host name", 0), 0u);
  EXPECT_EQ(checkExportClient("GSS/krb5"), "'GSS' is not an IPv4 address (four numbers 0..255)");
  for (const char* ok : {"10.0.0.0/24", "*.example.com", "[a-c]*.lab", "fe80::/64", "@gss"})
    EXPECT_EQ(checkExportClient(ok), "") << ok;
}

TEST(Rules, FsidIdentityIsTheValueExportfsReads) {
  using nfsrdma::server::fsidIdentity;
  std::string why;
  EXPECT_EQ(fsidIdentity("root", why), "n:0");
  EXPECT_EQ(fsidIdentity("0", why), "n:0");
  EXPECT_EQ(fsidIdentity("01", why), "n:1");
  EXPECT_EQ(fsidIdentity("010", why), "n:8");
  EXPECT_EQ(fsidIdentity("0x1f", why), "n:31");
  EXPECT_EQ(fsidIdentity("4294967295", why), "n:4294967295");
  EXPECT_EQ(fsidIdentity("8C8E2B1A-4F3E-4D2A-9C1B-0123456789AB", why),
            "u:8c8e2b1a4f3e4d2a9c1b0123456789ab");
  EXPECT_TRUE(why.empty()) << why;
  for (const char* bad : {"08", "abc", "0x", "-1", "+1", " 1", "0x100000000", "1.5", ""}) {
    why.clear();
    EXPECT_EQ(fsidIdentity(bad, why), "") << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

TEST(Rules, ExportPathsAreAbsoluteAndCanonical) {
  using nfsrdma::server::checkExportPath;
  for (const char* ok : {"/", "/srv/data", "/srv/my data", "/srv/a..b", "/srv/..x", "/srv/x.."})
    EXPECT_EQ(checkExportPath(ok), "") << ok;
  EXPECT_EQ(checkExportPath("srv"), "must be absolute");
  EXPECT_NE(checkExportPath("/srv/.."), "");
  EXPECT_NE(checkExportPath("/../srv"), "");
  EXPECT_NE(checkExportPath(std::string("/srv/a\0b", 8)), "");
  EXPECT_EQ(checkExportPath("/" + std::string(1023, 'a')), "");
  EXPECT_NE(checkExportPath("/" + std::string(1024, 'a')), "");
}

TEST(Rules, ShownInputIsBoundedAndPrintable) {
  using nfsrdma::server::shownInput;
  EXPECT_EQ(shownInput("abc"), "abc");
  EXPECT_EQ(shownInput(std::string("a\nb\0", 4)), "a\\x0ab\\x00");
  EXPECT_EQ(shownInput(std::string(81, 'x')), std::string(80, 'x') + "... (81 bytes)");
  EXPECT_EQ(shownInput(std::string(80, 'x')), std::string(80, 'x'));
}
