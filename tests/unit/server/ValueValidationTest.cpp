// Validation of every value nfsrdma-server writes, by the rules of its
// consumer (exports(5)/exportfs, nfs.conf, the kernel's sysctls), and bounded
// config input.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <tuple>

#include "server/ExportsFile.h"
#include "server/ServerConfig.h"
#include "server/ServerPlan.h"
#include "tests/unit/server/StagedHost.h"
#include "tests/unit/server/ToolRunner.h"

using nfsrdma::server::ConfigError;
using nfsrdma::server::ExportsFile;
using nfsrdma::server::parseServerConfig;
using nfsrdma::server::renderOwnExports;
using nfsrdma::server::testing::runTool;
using nfsrdma::server::testing::StagedHost;

namespace {

std::string oneClient(const std::string& host, const std::string& extra = "") {
  return "exports:\n  - path: /srv/nfsrdma/data\n    clients:\n      - host: '" + host + "'\n" +
         (extra.empty() ? "" : "        " + extra + "\n");
}

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

// Every spelling that matches all hosts needs --allow-insecure for rw +
// no_root_squash, and passes with it.
TEST(AllowInsecure, CoversEveryWorldReachableSpelling) {
  for (const std::string host : {"*", "0.0.0.0/0", "::/0", "10.0.0.0/0", "10.0.0.0/0.0.0.0",
                                 "fe80::/0", "*.*", "?*", "**"}) {
    SCOPED_TRACE(host);
    StagedHost h;
    h.write("cfg.yaml", oneClient(host, "squash: no_root_squash"));
    const std::string cfg = (h.root / "cfg.yaml").string();
    auto refused = runTool({"--root", h.root.string(), "plan", cfg});
    EXPECT_EQ(refused.status, 1) << refused.err;
    EXPECT_NE(refused.err.find("(rw + no_root_squash to '" + host + "')"), std::string::npos)
        << refused.err;
    auto allowed = runTool({"--root", h.root.string(), "--allow-insecure", "plan", cfg});
    EXPECT_EQ(allowed.status, 0) << allowed.err;
  }
}

// Squashed users mapped to uid 0 (or gid 0) are root under another name:
// with root_squash root stays uid 0, with all_squash every user becomes it.
TEST(AllowInsecure, CoversSquashingToIdZero) {
  for (const auto& [host, extra, shown] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"*", "options: [anonuid=0]", "(rw + anonuid=0 to '*': anonuid=0 maps"},
           {"0.0.0.0/0", "squash: all_squash\n        options: [anonuid=0]",
            "(rw + anonuid=0 to '0.0.0.0/0': anonuid=0 maps"},
           {"*.*", "options: [anonuid=7, anonuid=0]", "(rw + anonuid=0 to '*.*'"},
           {"::/0", "options: [anongid=0]", "(rw + anongid=0 to '::/0': anongid=0 maps"}}) {
    SCOPED_TRACE(host + " " + extra);
    StagedHost h;
    h.write("cfg.yaml", oneClient(host, extra));
    const std::string cfg = (h.root / "cfg.yaml").string();
    auto refused = runTool({"--root", h.root.string(), "plan", cfg});
    EXPECT_EQ(refused.status, 1) << refused.err;
    EXPECT_NE(refused.err.find(shown), std::string::npos) << refused.err;
    auto allowed = runTool({"--root", h.root.string(), "--allow-insecure", "plan", cfg});
    EXPECT_EQ(allowed.status, 0) << allowed.err;
  }
}

TEST(AllowInsecure, NarrowSpecsAndReadOnlyNeedNoFlag) {
  for (const auto& [host, extra] : std::vector<std::pair<std::string, std::string>>{
           {"10.0.0.0/8", "squash: no_root_squash"},
           {"*.example.com", "squash: no_root_squash"},
           {"*", "access: ro\n        squash: no_root_squash"},
           {"0.0.0.0/0", "squash: root_squash"},
           {"10.0.0.0/8", "options: [anonuid=0, anongid=0]"},
           {"*", "access: ro\n        options: [anonuid=0]"},
           {"*", "options: [anonuid=65534, anongid=100]"}}) {
    SCOPED_TRACE(host);
    StagedHost h;
    h.write("cfg.yaml", oneClient(host, extra));
    auto r = runTool({"--root", h.root.string(), "plan", (h.root / "cfg.yaml").string()});
    EXPECT_EQ(r.status, 0) << r.err;
  }
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

TEST(ConfigFile, AtTheSizeLimitPassesAndOneByteMoreIsRefused) {
  StagedHost h;
  const std::string body = oneClient("h1");
  std::string text = body + "#" + std::string(1048576 - body.size() - 2, 'x') + "\n";
  ASSERT_EQ(text.size(), 1048576u);
  h.write("cfg.yaml", text);
  const std::string cfg = (h.root / "cfg.yaml").string();
  auto ok = runTool({"--root", h.root.string(), "plan", cfg});
  EXPECT_EQ(ok.status, 0) << ok.err.substr(0, 300);
  h.write("cfg.yaml", text + "\n");
  auto big = runTool({"--root", h.root.string(), "plan", cfg});
  EXPECT_EQ(big.status, 1);
  EXPECT_NE(big.err.find(cfg + ": is 1048577 bytes; a config is at most 1048576 bytes (1 MiB)"),
            std::string::npos)
      << big.err;
}

TEST(ConfigFile, DevZeroIsRefusedNotRead) {
  auto r = runTool({"plan", "/dev/zero"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("/dev/zero: not a regular file"), std::string::npos) << r.err;
}

// A FIFO would block open() until a writer comes; the tool must not wait.
TEST(ConfigFile, FifoIsRefusedWithoutBlocking) {
  StagedHost h;  // only for a temporary directory; the FIFO is outside its snapshot
  const std::string fifo = h.root.string() + ".fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto run = std::async(std::launch::async, [&] { return runTool({"plan", fifo}); });
  if (run.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    ADD_FAILURE() << "plan blocked on a FIFO";
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // lets the reader go
    if (fd >= 0) ::close(fd);
  }
  auto r = run.get();
  ::unlink(fifo.c_str());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(fifo + ": not a regular file"), std::string::npos) << r.err;
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

// Host checks resolve every link inside the root (openat2 RESOLVE_IN_ROOT),
// as the host would with the root as "/": sysfs is links all the way
// (/sys/class/infiniband/rxe0 -> ../../devices/...), and a link that leads
// out of the root must not find what lies outside it.
namespace {

// A directory beside (not under) the staged root, removed with the test.
struct OutsideDir {
  explicit OutsideDir(const StagedHost& h) : dir(h.root.string() + ".outside") {
    std::filesystem::create_directories(dir / "rxe0/ports/1");
    std::filesystem::create_directories(dir / "eth0");
    std::filesystem::create_directories(dir / "data");
  }
  ~OutsideDir() { std::filesystem::remove_all(dir); }
  std::filesystem::path dir;
};

// Moves a staged entry to `to` (a root-relative path) and links `rel` to `target`.
void replaceWithLink(const StagedHost& h, const std::string& rel, const std::string& to,
                     const std::string& target) {
  if (!to.empty()) {
    std::filesystem::create_directories((h.root / to).parent_path());
    std::filesystem::rename(h.root / rel, h.root / to);
  } else {
    std::filesystem::remove_all(h.root / rel);
  }
  std::filesystem::create_symlink(target, h.root / rel);
}

nfsrdma::server::testing::ToolRun planOf(const StagedHost& h, const std::string& yaml) {
  h.write("cfg.yaml", yaml);
  return runTool({"--root", h.root.string(), "plan", (h.root / "cfg.yaml").string()});
}

// The run was refused (status 1) with `message` in what it printed.
void expectRefused(const nfsrdma::server::testing::ToolRun& r, const std::string& message) {
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos)
      << "expected:\n  " << message << "\ngot:\n  " << r.err;
}

const std::string kDeviceAndNetdev =
    "exports:\n  - path: /srv/nfsrdma/data\n    clients: [{host: 10.0.0.0/24}]\n"
    "rdma:\n  device: rxe0\n  netdev: eth0\n";

}  // namespace

TEST(HostChecks, SysfsLinksInsideTheRootAreFollowed) {
  StagedHost h;
  replaceWithLink(h, "sys/class/infiniband/rxe0", "sys/devices/virtual/infiniband/rxe0",
                  "../../devices/virtual/infiniband/rxe0");
  replaceWithLink(h, "sys/class/net/eth0", "sys/devices/virtual/net/eth0",
                  "/sys/devices/virtual/net/eth0");  // absolute: read with the root as "/"
  const auto r = planOf(h, kDeviceAndNetdev);
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(HostChecks, SysfsLinksLeavingTheRootFindNothing) {
  for (const bool absolute : {true, false}) {
    SCOPED_TRACE(absolute ? "absolute link" : "relative link climbing above the root");
    StagedHost h;
    const OutsideDir out(h);
    const std::string up = "../../../../" + out.dir.filename().string();  // from sys/class/x/
    replaceWithLink(h, "sys/class/infiniband/rxe0", "",
                    absolute ? (out.dir / "rxe0").string() : up + "/rxe0");
    expectRefused(planOf(h, kDeviceAndNetdev),
                  "cfg.yaml:5:11: rdma device 'rxe0' does not exist (looked at "
                  "/sys/class/infiniband/rxe0 (under --root " +
                      h.root.string() + "), where symlinks resolve with the root as '/'");
    std::filesystem::remove(h.root / "sys/class/infiniband/rxe0");
    h.mkdir("sys/class/infiniband/rxe0");
    replaceWithLink(h, "sys/class/net/eth0", "",
                    absolute ? (out.dir / "eth0").string() : up + "/eth0");
    expectRefused(planOf(h, kDeviceAndNetdev),
                  "cfg.yaml:6:11: rdma netdev 'eth0' does not exist (looked at "
                  "/sys/class/net/eth0 (under --root ");
  }
}

TEST(HostChecks, ExportPathLinksResolveInsideTheRoot) {
  for (const std::string target : {"scratch", "/srv/nfsrdma/scratch", "../nfsrdma/scratch"}) {
    SCOPED_TRACE(target);
    StagedHost h;
    replaceWithLink(h, "srv/nfsrdma/data", "", target);
    const auto r = planOf(h, oneClient("10.0.0.0/24"));
    EXPECT_EQ(r.status, 0) << r.err;
  }
}

TEST(HostChecks, ExportPathLinkLeavingTheRootIsRefused) {
  StagedHost h;
  const OutsideDir out(h);
  for (const std::string& target :
       {(out.dir / "data").string(), "../../../" + out.dir.filename().string() + "/data"}) {
    SCOPED_TRACE(target);
    replaceWithLink(h, "srv/nfsrdma/data", "", target);
    expectRefused(planOf(h, oneClient("10.0.0.0/24")),
                  "cfg.yaml:2:5: export path '/srv/nfsrdma/data' does not exist (looked at "
                  "/srv/nfsrdma/data (under --root " +
                      h.root.string() +
                      "), where symlinks resolve with the root as '/', never above it)");
  }
}

TEST(HostChecks, ExportPathMustBeADirectoryAtTheEndOfItsLinks) {
  StagedHost h;
  h.write("srv/nfsrdma/file", "x");
  replaceWithLink(h, "srv/nfsrdma/data", "", "file");
  expectRefused(planOf(h, oneClient("10.0.0.0/24")),
                "cfg.yaml:2:5: export path '/srv/nfsrdma/data' is not a directory");
  // A loop is what the confined resolution refuses: the error names the export.
  replaceWithLink(h, "srv/nfsrdma/data", "", "data");
  expectRefused(planOf(h, oneClient("10.0.0.0/24")),
                "cfg.yaml:2:5: export path '/srv/nfsrdma/data': cannot open "
                "/srv/nfsrdma/data (under --root ");
}

TEST(HostChecks, TheRootItselfIsAnExportableDirectory) {
  StagedHost h;
  const auto r = planOf(h, "exports:\n  - path: /\n    clients: [{host: 10.0.0.0/24}]\n");
  EXPECT_EQ(r.status, 0) << r.err;
}

// On the live host ("/") the same probes see ordinary directories and files;
// only reads, nothing on the host changes.
TEST(HostChecks, LiveHostSeesOrdinaryDirectoriesAndFiles) {
  using nfsrdma::server::HostPaths;
  using nfsrdma::server::validateOnHost;
  const auto errorOn = [](const std::string& path) -> std::string {
    const auto cfg = parseServerConfig(
        "exports:\n  - path: " + path + "\n    clients: [{host: 10.0.0.0/24}]\n", "cfg.yaml");
    try {
      validateOnHost(cfg, HostPaths("/"), false);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "(no error)";
  };
  StagedHost h;  // a directory and a file of the live host's /tmp
  h.write("file", "x");
  EXPECT_EQ(errorOn(h.root.string()), "(no error)");
  EXPECT_EQ(errorOn("/"), "(no error)");
  EXPECT_EQ(errorOn((h.root / "file").string()),
            "cfg.yaml:2:5: export path '" + (h.root / "file").string() +
                "' is not a directory (exportfs exports directories)");
  EXPECT_EQ(errorOn((h.root / "nope").string()),
            "cfg.yaml:2:5: export path '" + (h.root / "nope").string() +
                "' does not exist (looked at " + (h.root / "nope").string() + ")");
}
