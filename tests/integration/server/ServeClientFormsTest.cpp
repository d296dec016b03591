// `nfsrdma-server serve` against the real nfs-ganesha, one export per client
// form the config accepts (server/README.md "What the config may say"), each
// export with that one client: a client on this host must read the export's
// file byte for byte through nfsrdma-client (from 127.0.0.1, or ::1 on the
// IPv6 listener), and each control, a form that does not match it, must not
// (ganesha hides the export: NFS4ERR_NOENT). Names, wildcards and the
// netgroup meet ganesha's own lookups, so serve and its ganesha run with a
// private /etc (hosts, netgroup, nsswitch.conf: files only) in a mount
// namespace of their own; the host's /etc is not touched.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "server/ganesha/GaneshaServer.h"
#include "tests/integration/server/ServerTestSupport.h"

namespace fs = std::filesystem;

namespace {

using nfsrdma::testing::Child;
using nfsrdma::testing::PrivateEtc;
using nfsrdma::testing::requireReal;
using nfsrdma::testing::run;
using nfsrdma::testing::TempDir;

// One export of the test: its client's form and whether a client on this
// host may read through it.
struct Form {
  std::string host;
  bool admitsThisHost;
};

// The answers ganesha's lookups get: 127.0.0.1 is "localhost" first (the
// reverse lookup wildcards and netgroups match against), and names its
// config lexer cannot read resolve too.
PrivateEtc lookupEtc() {
  return PrivateEtc(
      {{"hosts",
        "127.0.0.1 localhost 1host.nfsrdma.test on\n"
        "::1 ip6-localhost\n"},
       {"nsswitch.conf",
        "passwd: files\ngroup: files\nshadow: files\nhosts: files\nnetgroup: files\n"},
       {"netgroup", "nfsrdma_trusted (localhost,,)\nnfsrdma_others (elsewhere,,)\n"}});
}

// A config of one read-only export per form, /f0, /f1, ..., each holding
// form.txt with the form's own line.
std::string writeConfig(const fs::path& dir, const std::vector<Form>& forms,
                        const std::string& bind) {
  std::ofstream cfg(dir / "cfg.yaml");
  cfg << "exports:\n";
  for (std::size_t i = 0; i < forms.size(); ++i) {
    const fs::path data = dir / ("data" + std::to_string(i));
    fs::create_directories(data);
    std::ofstream(data / "form.txt") << "export " << i << " for '" << forms[i].host << "'\n";
    cfg << "  - path: " << data.string() << "\n    pseudo: /f" << i
        << "\n    clients:\n      - host: '" << forms[i].host
        << "'\n        access: ro\n        insecure: true\n";
  }
  cfg << "transports:\n  bind_address: '" << bind << "'\n";
  return (dir / "cfg.yaml").string();
}

std::string clientCat(const std::string& url, int* status) {
  return run(std::string(NFSRDMA_CLIENT_BIN) + " cat '" + url + "'", status);
}

// Serves `forms` on `bind` and reads every export through `urlHost`.
void serveAndReadEachForm(const std::vector<Form>& forms, const std::string& bind,
                          const std::string& urlHost) {
  TempDir dir{"nfsrdma-forms"};
  const std::string config = writeConfig(dir.path, forms, bind);
  const PrivateEtc etc = lookupEtc();
  Child tool({NFSRDMA_SERVER_BIN, "serve", "--port", "0", "--work-dir",
              (dir.path / "work").string(), config},
             [&etc] { return etc.enter(); });
  const bool ready = tool.readUntil("ready;", std::chrono::seconds(90));
  if (!ready && tool.output.find("child setup: ") != std::string::npos && !requireReal())
    GTEST_SKIP() << "no private /etc for serve here: " << tool.output;
  ASSERT_TRUE(ready) << tool.output;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(tool.output, m, std::regex("nfs-ganesha pid [0-9]+ on \\S+:([0-9]+)")))
      << tool.output;
  const std::string port = m[1];
  for (std::size_t i = 0; i < forms.size(); ++i) {
    int status = -1;
    const std::string url =
        "nfs://" + urlHost + ":" + port + "/f" + std::to_string(i) + "/form.txt";
    const std::string got = clientCat(url, &status);
    if (forms[i].admitsThisHost) {
      EXPECT_EQ(status, 0) << forms[i].host << ": " << got;
      EXPECT_EQ(got, "export " + std::to_string(i) + " for '" + forms[i].host + "'\n")
          << forms[i].host;
    } else {
      EXPECT_NE(status, 0) << forms[i].host << " let this host read: " << got;
      EXPECT_NE(got.find("NFS4ERR_NOENT"), std::string::npos) << forms[i].host << ": " << got;
    }
  }
  std::ifstream conf(dir.path / "work/ganesha.conf");
  const std::string rendered((std::istreambuf_iterator<char>(conf)),
                             std::istreambuf_iterator<char>());
  EXPECT_NE(rendered.find("    Clients = 127.0.0.1;  # 1host.nfsrdma.test, resolved by nfsrdma"),
            std::string::npos)
      << rendered;
  ASSERT_EQ(::kill(tool.pid, SIGTERM), 0);
  EXPECT_NE(tool.waitExit(std::chrono::seconds(30)), -1) << tool.output;
}

}  // namespace

// Every IPv4, name, wildcard and netgroup form, read from 127.0.0.1; the
// controls include bare 0.0.0.0, which ganesha alone reads as every host.
TEST(ServeClientForms, EachFormTheConfigAcceptsLets127001ReadOverIpv4) {
  NFSRDMA_REQUIRE_SERVE();
  serveAndReadEachForm({{"*", true},
                        {"localhost", true},
                        {"1host.nfsrdma.test", true},
                        {"on", true},
                        {"local*", true},
                        {"*host", true},
                        {"localhos?", true},
                        {"?ocalhost", true},
                        {"[l]ocalhost", true},
                        {"[^x]ocalhost", true},
                        {"127.0.0.*", true},
                        {"@nfsrdma_trusted", true},
                        {"127.0.0.1", true},
                        {"127.0.0.0/8", true},
                        {"127.0.0.1/8", true},
                        {"127.0.0.0/008", true},
                        {"127.0.0.1/32", true},
                        {"127.0.0.0/255.0.0.0", true},
                        {"127.0.0.0/255.255.255.0", true},
                        {"10.0.0.0/0", true},
                        {"10.0.0.0/0.0.0.0", true},
                        {"::ffff:127.0.0.1", true},
                        {"::ffff:127.0.0.0/104", true},
                        {"10.255.0.0/16", false},
                        {"10.255.0.0/255.255.0.0", false},
                        {"0.0.0.0", false},
                        {"@nfsrdma_others", false},
                        {"elsewhere*", false},
                        {"::1", false}},
                       "127.0.0.1", "127.0.0.1");
}

// The IPv6 forms, read from ::1 on an IPv6 listener.
TEST(ServeClientForms, EachIpv6FormLetsColonColon1ReadOverIpv6) {
  NFSRDMA_REQUIRE_SERVE();
  serveAndReadEachForm({{"::1", true},
                        {"0:0:0:0:0:0:0:1", true},
                        {"::1/128", true},
                        {"::1/64", true},
                        {"::/0", true},
                        {"ip6-localhost", true},
                        {"1host.nfsrdma.test", false},
                        {"fd00::/8", false},
                        {"::2", false},
                        {"127.0.0.1", false}},
                       "::1", "[::1]");
}
