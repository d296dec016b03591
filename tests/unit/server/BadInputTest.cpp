// Bad input, end to end through nfsrdma-server against a --root tree: every
// case must exit non-zero with a message naming the input (file:line:column
// for YAML) and what was expected, and must leave every file in the tree
// byte-identical: nothing is written before everything is validated.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <functional>

#include "tests/unit/server/StagedHost.h"
#include "tests/unit/server/ToolRunner.h"
#include "util/Version.h"

using nfsrdma::server::testing::runTool;
using nfsrdma::server::testing::StagedHost;

namespace {

struct BadCase {
  const char* name;
  const char* yaml;               // nullptr: no config file written
  std::vector<std::string> args;  // "{cfg}" and "{root}" are substituted; empty: apply {cfg}
  const char* expect;             // substring of stderr ("{cfg}" substituted)
  int status = 1;
  std::function<void(const StagedHost&)> setup = nullptr;  // the host before the run
  const char* expectOut = nullptr;  // substring of stdout (`plan` lists why apply refuses there)
};

// Host files nfs-utils reads in a way nfsrdma-server cannot know.
void fifoAt(const StagedHost& h, const std::string& rel) {
  std::filesystem::create_directories((h.root / rel).parent_path());
  if (::mkfifo((h.root / rel).c_str(), 0600) != 0) throw std::runtime_error("mkfifo " + rel);
}
std::function<void(const StagedHost&)> nfsConf(std::string text) {
  return [text](const StagedHost& h) { h.write("etc/nfs.conf", text); };
}
// etc/c1.conf includes c2.conf, ..., c<n>.conf sets threads; nfs.conf includes c1.conf.
void includeChain(const StagedHost& h, int n) {
  for (int i = 1; i < n; ++i)
    h.write("etc/c" + std::to_string(i) + ".conf",
            "include = c" + std::to_string(i + 1) + ".conf\n");
  h.write("etc/c" + std::to_string(n) + ".conf", "threads=4\n");
  h.write("etc/nfs.conf", "[nfsd]\ninclude = c1.conf\n");
}

// An undo record: a step apply writes, then `step` (hand-edited).
std::function<void(const StagedHost&)> record(std::string step) {
  return [step](const StagedHost& h) {
    h.write("var/lib/nfsrdma/last-apply.yaml",
            "applied_at: 20261201T000000Z\nconfig: x\nundo:\n"
            "  - kind: file\n    path: /etc/exports.d/nfsrdma.exports\n    existed: false\n" +
                step);
  };
}
#define NFS_CONF_STEP(keys)                                                  \
  "  - kind: file\n    path: /etc/nfs.conf\n    existed: true\n    backup: " \
  "/var/lib/nfsrdma/backups/nfs.conf.20261201T000000Z\n    keys:\n      - " keys "\n"

#define EXPORT_OK "exports:\n  - path: /srv/nfsrdma/data\n    clients:\n      - host: 10.0.0.0/24\n"
#define CLIENT(extra)                                                                              \
  "exports:\n  - path: /srv/nfsrdma/data\n    clients:\n      - host: 10.0.0.0/24\n        " extra \
  "\n"
#define A100                                                                                       \
  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" \
  "aaaaaa"

const std::vector<BadCase> kCases = {
    // YAML structure.
    {"YamlSyntax",
     "exports: [\n  - path: /x\n",
     {},
     "{cfg}:2:3: YAML syntax error: illegal block entry"},
    {"EmptyFile", "", {}, "{cfg}:1:1: the file is empty (expected at least an 'exports' list)"},
    {"TopLevelList",
     "- a\n- b\n",
     {},
     "{cfg}:1:1: the top level must be a mapping of keys to values"},
    {"UnknownTopKey",
     EXPORT_OK "exprots: []\n",
     {},
     "{cfg}:5:1: unknown key 'exprots' in the top level (expected one of: profile, exports, "
     "transports, nfsd, rdma, tuning)"},
    {"MissingExports",
     "profile: default\n",
     {},
     "{cfg}:1:1: missing 'exports' (a list of directories to export)"},
    {"ExportsNotAList",
     "exports: /srv\n",
     {},
     "{cfg}:1:10: 'exports' must be a non-empty list of {path, clients}"},
    {"ExportsEmpty",
     "exports: []\n",
     {},
     "{cfg}:1:10: 'exports' must be a non-empty list of {path, clients}"},
    {"ExportNotAMap",
     "exports:\n  - /srv/nfsrdma/data\n",
     {},
     "{cfg}:2:5: exports[0] must be a mapping of keys to values"},
    // Export paths.
    {"MissingPath", "exports:\n  - clients: []\n", {}, "{cfg}:2:5: exports[0]: missing 'path'"},
    {"RelativePath",
     "exports:\n  - path: srv/data\n    clients: [{host: '*'}]\n",
     {},
     "{cfg}:2:11: exports[0] path 'srv/data' must be absolute"},
    {"PathMissingOnHost",
     "exports:\n  - path: /srv/nope\n    clients: [{host: h1}]\n",
     {},
     "{cfg}:2:5: export path '/srv/nope' does not exist (looked at /srv/nope (under --root "
     "{root}), where symlinks resolve with the root as '/', never above it)"},
    {"PathIsAFile",
     "exports:\n  - path: /etc/exports\n    clients: [{host: h1}]\n",
     {},
     "{cfg}:2:5: export path '/etc/exports' is not a directory"},
    {"DuplicatePath",
     EXPORT_OK "  - path: /srv/nfsrdma/data/\n    clients: [{host: h1}]\n",
     {},
     "{cfg}:5:11: exports[1] path '/srv/nfsrdma/data' is exported twice (first at line 2)"},
    {"PathWithQuote",
     "exports:\n  - path: '/srv/a\"b'\n    clients: [{host: h1}]\n",
     {},
     "contains a quote, backslash or newline"},
    {"MissingClients",
     "exports:\n  - path: /srv/nfsrdma/data\n",
     {},
     "{cfg}:2:5: exports[0]: missing 'clients' (who may mount it, e.g. - host: 10.0.0.0/24)"},
    {"EmptyClients",
     "exports:\n  - path: /srv/nfsrdma/data\n    clients: []\n",
     {},
     "{cfg}:3:14: exports[0] clients must be a non-empty list"},
    {"RelativePseudo",
     "exports:\n  - path: /srv/nfsrdma/data\n    pseudo: data\n    clients: [{host: h1}]\n",
     {},
     "{cfg}:3:13: exports[0] pseudo 'data' must be an absolute path below '/', e.g. /export"},
    {"DuplicatePseudo",
     EXPORT_OK
     "    pseudo: /p\n  - path: /srv/nfsrdma/scratch\n    pseudo: /p\n    clients: [{host: h1}]\n",
     {},
     "exports[1]: pseudo path '/p' is used twice"},
    // Clients.
    {"UnknownClientKey",
     CLIENT("acess: rw"),
     {},
     "{cfg}:5:9: unknown key 'acess' in exports[0].clients[0] (expected one of: host, access, "
     "sync, squash, sec, fsid, crossmnt, subtree_check, insecure, options)"},
    {"BadAccess",
     CLIENT("access: readwrite"),
     {},
     "{cfg}:5:17: exports[0].clients[0] access: unknown value 'readwrite' (expected one of: rw, "
     "ro)"},
    {"BadSync",
     CLIENT("sync: maybe"),
     {},
     "{cfg}:5:15: exports[0].clients[0] sync: expected true or false, got 'maybe'"},
    {"BadSquash",
     CLIENT("squash: root"),
     {},
     "exports[0].clients[0] squash: unknown value 'root' (expected one of: root_squash, "
     "no_root_squash, all_squash)"},
    {"BadSec",
     CLIENT("sec: [sys, krb6]"),
     {},
     "{cfg}:5:20: exports[0].clients[0] sec: unknown value 'krb6' (expected one of: sys, krb5, "
     "krb5i, krb5p, none)"},
    {"EmptySec",
     CLIENT("sec: []"),
     {},
     "exports[0].clients[0] sec: the list is empty (expected e.g. [sys])"},
    {"BadFsid",
     CLIENT("fsid: 'a b'"),
     {},
     "exports[0].clients[0] fsid 'a b' must be a number, 'root' or a UUID"},
    {"DuplicateFsid",
     CLIENT("fsid: 1") "  - path: /srv/nfsrdma/scratch\n    clients:\n      - host: h2\n        "
                       "fsid: 1\n",
     {},
     "{cfg}:8:9: exports[1]: duplicate fsid=1 (already used by the export at line 2); each export "
     "needs its own fsid"},
    {"DuplicateFsidOnOneLine",
     "exports: [{path: /srv/nfsrdma/data, clients: [{host: h1, fsid: 7}]}, "
     "{path: /srv/nfsrdma/scratch, clients: [{host: h2, fsid: 7}]}]\n",
     {},
     "{cfg}:1:109: exports[1]: duplicate fsid=7 (already used by the export at line 1); each "
     "export "
     "needs its own fsid"},
    {"DuplicateFsidThroughOptions",
     CLIENT("fsid: 7") "  - path: /srv/nfsrdma/scratch\n    clients:\n      - host: h2\n        "
                       "options: [fsid=7]\n",
     {},
     "{cfg}:8:9: exports[1]: duplicate fsid=7 (already used by the export at line 2); each export "
     "needs its own fsid"},
    {"DuplicatePathSpelledDifferently",
     EXPORT_OK "  - path: /srv//nfsrdma/./data\n    clients: [{host: h1}]\n",
     {},
     "{cfg}:5:11: exports[1] path '/srv/nfsrdma/data' is exported twice (first at line 2)"},
    {"OptionsNotAList",
     CLIENT("options: no_wdelay"),
     {},
     "exports[0].clients[0] options must be a list of exports(5) options, e.g. [no_wdelay]"},
    {"UnknownOption",
     CLIENT("options: [rww]"),
     {},
     "{cfg}:5:19: exports[0].clients[0] option 'rww' is not an exports(5) option"},
    // An option that contradicts a key's default overrides it (exportfs reads the last);
    // one that contradicts a key the config wrote is an error naming both.
    {"RoWithRw",
     CLIENT("access: ro\n        options: [rw]"),
     {},
     "{cfg}:6:19: exports[0].clients[0] option 'rw' conflicts with access: ro (line 5); keep one "
     "of them"},
    {"SyncWithAsync",
     CLIENT("sync: true\n        options: [async]"),
     {},
     "exports[0].clients[0] option 'async' conflicts with sync: true (line 5); keep one of them"},
    {"SquashConflict",
     CLIENT("squash: root_squash\n        options: [no_root_squash]"),
     {},
     "{cfg}:6:19: exports[0].clients[0] option 'no_root_squash' conflicts with squash: "
     "root_squash (line 5); keep one of them"},
    {"SecureConflict",
     CLIENT("insecure: true\n        options: [secure]"),
     {},
     "exports[0].clients[0] option 'secure' conflicts with insecure: true (line 5)"},
    {"OptionsContradictEachOther",
     CLIENT("options: [hide, nohide]"),
     {},
     "{cfg}:5:25: exports[0].clients[0] option 'nohide' conflicts with option 'hide' (line 5); "
     "keep one of them"},
    {"RootToTheWorld",
     "exports:\n  - path: /srv/nfsrdma/data\n    clients:\n      - host: '*'\n        squash: "
     "no_root_squash\n",
     {},
     "{cfg}:4:9: export '/srv/nfsrdma/data' gives root on the server to any host (rw + "
     "no_root_squash to '*'); restrict 'host' to your RDMA network, or pass --allow-insecure"},
    {"BadHost",
     CLIENT("") "      - host: 'bad host!'\n",
     {},
     "{cfg}:6:15: exports[0].clients[1] host 'bad host!': ' ' is not allowed in a host name "
     "(host names are dot-separated labels of 1..63 letters, digits, '-' and '_'"},
    {"HostLikeAnOptionList",
     CLIENT("") "      - host: '-ro'\n",
     {},
     "{cfg}:6:15: exports[0].clients[1] host '-ro': a leading '-' would make exportfs read it as "
     "an options list"},
    {"DuplicateHost",
     CLIENT("") "      - host: 10.0.0.0/24\n",
     {},
     "exports[0]: client '10.0.0.0/24' is listed twice"},
    // Every spelling of "all hosts" (issue 26): root to the world needs --allow-insecure.
    {"RootToTheWorldV4",
     "exports:\n  - path: /srv/nfsrdma/data\n    clients:\n      - host: 0.0.0.0/0\n        "
     "squash: "
     "no_root_squash\n",
     {},
     "{cfg}:4:9: export '/srv/nfsrdma/data' gives root on the server to any host (rw + "
     "no_root_squash to '0.0.0.0/0'); restrict 'host' to your RDMA network, or pass "
     "--allow-insecure"},
    {"RootToTheWorldV6",
     "exports:\n  - path: /srv/nfsrdma/data\n    clients:\n      - host: '::/0'\n        squash: "
     "no_root_squash\n",
     {},
     "gives root on the server to any host (rw + no_root_squash to '::/0')"},
    {"RootToTheWorldPrefixZero",
     "exports:\n  - path: /srv/nfsrdma/data\n    clients:\n      - host: 10.1.2.0/0\n        "
     "squash: "
     "no_root_squash\n",
     {},
     "gives root on the server to any host (rw + no_root_squash to '10.1.2.0/0')"},
    {"RootToTheWorldNetmaskZero",
     "exports:\n  - path: /srv/nfsrdma/data\n    clients:\n      - host: 10.1.2.0/0.0.0.0\n        "
     "squash: no_root_squash\n",
     {},
     "gives root on the server to any host (rw + no_root_squash to '10.1.2.0/0.0.0.0')"},
    {"RootToTheWorldWildcard",
     "exports:\n  - path: /srv/nfsrdma/data\n    clients:\n      - host: '*.*'\n        squash: "
     "no_root_squash\n",
     {},
     "gives root on the server to any host (rw + no_root_squash to '*.*')"},
    {"RootToTheWorldThroughOptions",
     "exports:\n  - path: /srv/nfsrdma/data\n    clients:\n      - host: '*'\n        options: "
     "[no_root_squash]\n",
     {},
     "gives root on the server to any host (rw + no_root_squash to '*')"},
    // Squashed users mapped to id 0 are root (or root's group) under another name.
    {"AnonuidZeroToTheWorld",
     "exports:\n  - path: /srv/nfsrdma/data\n    clients:\n      - host: '*'\n        options: "
     "[anonuid=0]\n",
     {},
     "{cfg}:4:9: export '/srv/nfsrdma/data' gives root on the server to any host (rw + "
     "anonuid=0 to '*': anonuid=0 maps the squashed users to root, which is no_root_squash by "
     "another name); restrict 'host' to your RDMA network, or pass --allow-insecure"},
    {"AnonuidZeroAllSquashToTheWorld",
     "exports:\n  - path: /srv/nfsrdma/data\n    clients:\n      - host: 0.0.0.0/0\n        "
     "squash: all_squash\n        options: [anonuid=000]\n",
     {},
     "(rw + anonuid=0 to '0.0.0.0/0': anonuid=0 maps the squashed users to root"},
    {"AnongidZeroToTheWorld",
     "exports:\n  - path: /srv/nfsrdma/data\n    clients:\n      - host: '::/0'\n        options: "
     "[all_squash, anongid=0]\n",
     {},
     "{cfg}:4:9: export '/srv/nfsrdma/data' gives root's group on the server to any host (rw + "
     "anongid=0 to '::/0': anongid=0 maps the squashed users to group 0 (root)"},
    // Client specs exportfs would refuse or misread (exports(5) "Machine Name Formats").
    {"HostBadIpv4",
     CLIENT("") "      - host: 300.1.1.1/8\n",
     {},
     "{cfg}:6:15: exports[0].clients[1] host '300.1.1.1/8': '300.1.1.1' is not an IPv4 address "
     "(four numbers 0..255)"},
    {"HostIpv4PrefixTooLong",
     CLIENT("") "      - host: 10.0.0.0/33\n",
     {},
     "{cfg}:6:15: exports[0].clients[1] host '10.0.0.0/33': prefix /33 is out of range 0..32 for "
     "an IPv4 network"},
    {"HostIpv4EmptyPrefix",
     CLIENT("") "      - host: 10.0.0.0/\n",
     {},
     "host '10.0.0.0/': the prefix after '/' is empty"},
    {"HostIpv4NonContiguousMask",
     CLIENT("") "      - host: 10.0.0.0/255.0.255.0\n",
     {},
     "host '10.0.0.0/255.0.255.0': netmask 255.0.255.0 is not contiguous"},
    {"HostShortIpv4",
     CLIENT("") "      - host: 0/0\n",
     {},
     "host '0/0': '0' is not an IPv4 address (four numbers 0..255)"},
    {"HostIpv6PrefixTooLong",
     CLIENT("") "      - host: 'fe80::/129'\n",
     {},
     "host 'fe80::/129': prefix /129 is out of range 0..128 for an IPv6 network"},
    {"HostBadIpv6",
     CLIENT("") "      - host: 'fe80:::1'\n",
     {},
     "host 'fe80:::1': 'fe80:::1' is not an IPv6 address"},
    {"HostBracketedIpv6",
     CLIENT("") "      - host: '[fe80::1]/64'\n",
     {},
     "{cfg}:6:15: exports[0].clients[1] host '[fe80::1]/64': IPv6 addresses must not be in "
     "square brackets (exports(5) reads brackets as a wildcard character class); write "
     "fe80::1/64"},
    {"HostEmptyLabel",
     CLIENT("") "      - host: '*.'\n",
     {},
     "{cfg}:6:15: exports[0].clients[1] host '*.': label 2 is empty"},
    {"HostLabelEndsInDash",
     CLIENT("") "      - host: host-.example.com\n",
     {},
     "host 'host-.example.com': label 'host-' starts or ends with '-'"},
    {"HostPercent",
     CLIENT("") "      - host: my%host\n",
     {},
     "host 'my%host': '%' is not allowed in a host name"},
    {"HostEmptyNetgroup",
     CLIENT("") "      - host: '@'\n",
     {},
     "{cfg}:6:15: exports[0].clients[1] host '@': a netgroup needs a name (@name)"},
    // fsid as exportfs reads it (nfs-utils support/nfs/exports.c, parseopts).
    {"FsidBadOctal",
     CLIENT("fsid: '08'"),
     {},
     "{cfg}:5:15: exports[0].clients[0] fsid '08' is octal to exportfs (a leading 0), and '8' is "
     "not an octal digit; write 8"},
    {"FsidWord", CLIENT("fsid: abc"), {}, "exports[0].clients[0] fsid 'abc' must be a number"},
    {"FsidTooBig",
     CLIENT("fsid: 4294967296"),
     {},
     "exports[0].clients[0] fsid '4294967296' is above 4294967295"},
    {"FsidBadInOptions",
     CLIENT("options: [fsid=08]"),
     {},
     "{cfg}:5:19: exports[0].clients[0] option 'fsid=08' is octal to exportfs (a leading 0)"},
    {"DuplicateFsidLeadingZero",
     CLIENT("fsid: 1") "  - path: /srv/nfsrdma/scratch\n    clients:\n      - host: h2\n        "
                       "fsid: '01'\n",
     {},
     "{cfg}:8:9: exports[1]: duplicate fsid=01 (already used by the export at line 2 as fsid=1, "
     "the same fsid to exportfs); each export needs its own fsid"},
    {"DuplicateFsidRoot",
     CLIENT("fsid: 0") "  - path: /srv/nfsrdma/scratch\n    clients:\n      - host: h2\n        "
                       "fsid: root\n",
     {},
     "exports[1]: duplicate fsid=root (already used by the export at line 2 as fsid=0"},
    {"DuplicateFsidHex",
     CLIENT("fsid: 16") "  - path: /srv/nfsrdma/scratch\n    clients:\n      - host: h2\n        "
                        "options: [fsid=0x10]\n",
     {},
     "exports[1]: duplicate fsid=0x10 (already used by the export at line 2 as fsid=16"},
    // Export paths exportfs needs absolute and canonical.
    {"PathWithNul",
     "exports:\n  - path: \"/srv/a\\0b\"\n    clients: [{host: h1}]\n",
     {},
     "{cfg}:2:11: exports[0] path '/srv/a\\x00b' contains a control character (byte 0x00)"},
    {"PathWithTab",
     "exports:\n  - path: \"/srv/a\\tb\"\n    clients: [{host: h1}]\n",
     {},
     "exports[0] path '/srv/a\\x09b' contains a control character (byte 0x09)"},
    {"PathWithDotDot",
     "exports:\n  - path: /srv/nfsrdma/../nfsrdma/data\n    clients: [{host: h1}]\n",
     {},
     "{cfg}:2:11: exports[0] path '/srv/nfsrdma/../nfsrdma/data' has a '..' component; write "
     "the directory's own absolute path"},
    {"PathTooLong",
     "exports:\n  - path: /srv/" A100 A100 A100 A100 A100 A100 A100 A100 A100 A100
     "aaaaaaaaaaaaaaaaaaaa"
     "\n    clients: [{host: h1}]\n",
     {},
     "{cfg}:2:11: exports[0] path '/srv/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaa... (1025 bytes)' is longer than exportfs's 1024 bytes (NFS_MAXPATHLEN)"},
    // YAML structure exportfs never sees but the config must not hide.
    {"SecondDocument",
     EXPORT_OK "---\nprofile: latency\n",
     {},
     "{cfg}:5:1: a second YAML document starts here; the config is one document (remove the '---' "
     "line and what follows, or merge it into the first)"},
    {"SecondEmptyDocument", EXPORT_OK "---\n", {}, "{cfg}:5:1: a second YAML document starts here"},
    {"UnclosedQuote",
     "exports:\n  - path: \"/srv/nfsrdma/data\n    clients: [{host: h1}]\n",
     {},
     "{cfg}:2:11: YAML syntax error: this \" quote is never closed (its value would run to the end "
     "of the file)"},
    {"UnclosedSingleQuote",
     "exports:\n  - path: /srv/nfsrdma/data\n    clients:\n      - host: 'h1\n        access: ro\n",
     {},
     "{cfg}:4:15: YAML syntax error: this ' quote is never closed"},
    {"BindAddressNotAnAddress",
     EXPORT_OK "transports:\n  bind_address: 999.0.0.1\n",
     {},
     "{cfg}:6:17: transports bind_address '999.0.0.1' is not a numeric IPv4 or IPv6 address"},
    {"BindAddressOnPlan",
     EXPORT_OK "transports:\n  bind_address: my-host\n",
     {"plan", "{cfg}"},
     "{cfg}:6:17: transports bind_address 'my-host' is not a numeric IPv4 or IPv6 address"},
    // svc_rdma sysctls: the kernel's own ranges (net/sunrpc/xprtrdma/svc_rdma.c).
    {"ReqSizeBelowKernel",
     EXPORT_OK "tuning:\n  max_req_size: 2048\n",
     {},
     "{cfg}:6:17: tuning max_req_size: 2048 is out of range 4096..65536"},
    {"ReadRequestsAboveKernel",
     EXPORT_OK "tuning:\n  max_outbound_read_requests: 256\n",
     {},
     "tuning max_outbound_read_requests: 256 is out of range 1..255"},
    // The config file itself.
    {"ConfigIsADirectory",
     nullptr,
     {"plan", "{root}/srv"},
     "{root}/srv: is a directory; expected a YAML file"},
    {"ConfigIsACharDevice",
     nullptr,
     {"plan", "/dev/null"},
     "/dev/null: not a regular file (a device, FIFO or socket); expected a YAML file"},
    // Transports.
    {"PortZero",
     EXPORT_OK "transports:\n  tcp: {port: 0}\n",
     {},
     "{cfg}:6:15: transports tcp port: 0 is out of range 1..65535"},
    {"PortTooBig",
     EXPORT_OK "transports:\n  rdma:\n    port: 70000\n",
     {},
     "{cfg}:7:11: transports rdma port: 70000 is out of range 1..65535"},
    {"PortNotANumber",
     EXPORT_OK "transports:\n  rdma:\n    port: nfs\n",
     {},
     "transports rdma port: expected a whole number in 1..65535, got 'nfs'"},
    {"SamePort",
     EXPORT_OK "transports:\n  tcp: {port: 2049}\n  rdma: {port: 2049}\n",
     {},
     "{cfg}:6:3: transports: tcp and rdma cannot share port 2049"},
    {"BothDisabled",
     EXPORT_OK "transports:\n  tcp: {enabled: false}\n  rdma: {enabled: false}\n",
     {},
     "transports: tcp and rdma are both disabled"},
    {"TcpOffWithNfsv4",
     EXPORT_OK "transports:\n  tcp: {enabled: false}\n",
     {},
     "{cfg}:6:18: transports tcp enabled: false cannot be combined with NFSv4: rpc.nfsd will not "
     "start NFSv4 without TCP"},
    {"UnknownTransport",
     EXPORT_OK "transports:\n  udp: {port: 2049}\n",
     {},
     "{cfg}:6:3: unknown key 'udp' in transports (expected one of: bind_address, tcp, rdma)"},
    {"TransportsList",
     EXPORT_OK "transports: [tcp]\n",
     {},
     "{cfg}:5:13: transports must be a mapping of keys to values"},
    // nfsd.
    {"ZeroThreads",
     EXPORT_OK "nfsd:\n  threads: 0\n",
     {},
     "{cfg}:6:12: nfsd threads: 0 is out of range 1..8192"},
    {"ThreadsList",
     EXPORT_OK "nfsd:\n  threads: [8]\n",
     {},
     "nfsd threads must be a single value, not a list or mapping"},
    {"UnknownVersion",
     EXPORT_OK "nfsd:\n  versions: [\"4.1\", \"4.3\"]\n",
     {},
     "{cfg}:6:21: nfsd versions: unknown value '4.3' (expected one of: 3, 4.0, 4.1, 4.2)"},
    {"DuplicateVersion",
     EXPORT_OK "nfsd:\n  versions: [\"4.1\", \"4.1\"]\n",
     {},
     "nfsd versions: '4.1' is listed twice"},
    {"NoVersions",
     EXPORT_OK "nfsd:\n  versions: []\n",
     {},
     "nfsd versions must be a non-empty list"},
    {"ShortLease",
     EXPORT_OK "nfsd:\n  lease_time: 5\n",
     {},
     "{cfg}:6:15: nfsd lease_time: 5 is out of range 10..3600"},
    {"LongGrace",
     EXPORT_OK "nfsd:\n  grace_time: 99999\n",
     {},
     "nfsd grace_time: 99999 is out of range 10..3600"},
    // RDMA device and netdev.
    {"MissingDevice",
     EXPORT_OK "rdma:\n  device: mlx5_9\n",
     {},
     "{cfg}:6:11: rdma device 'mlx5_9' does not exist (looked at /sys/class/infiniband/mlx5_9 "
     "(under --root {root}), where symlinks resolve with the root as '/', never above it; list "
     "devices with `rdma link` or `ibv_devices`)"},
    {"MissingNetdev",
     EXPORT_OK "rdma:\n  netdev: eth9\n",
     {},
     "{cfg}:6:11: rdma netdev 'eth9' does not exist (looked at /sys/class/net/eth9 (under --root "
     "{root}), where symlinks resolve with the root as '/', never above it; list interfaces with "
     "`ip link`)"},
    {"DeviceNameEscapes",
     EXPORT_OK "rdma:\n  device: ../../etc\n",
     {},
     "rdma device '../../etc' is not a device name such as mlx5_0 or rxe0"},
    // Tuning and profile.
    {"UnknownTuning",
     EXPORT_OK "tuning:\n  max_credits: 64\n",
     {},
     "{cfg}:6:3: unknown key 'max_credits' in tuning (expected one of: max_requests, max_req_size, "
     "max_outbound_read_requests)"},
    {"TuningOutOfRange",
     EXPORT_OK "tuning:\n  max_requests: 1\n",
     {},
     "tuning max_requests: 1 is out of range 4..16384"},
    {"DuplicateKey",
     CLIENT("access: ro\n        access: rw"),
     {},
     "{cfg}:6:9: key 'access' appears twice in exports[0].clients[0]"},
    {"UnknownProfile",
     EXPORT_OK "profile: fast\n",
     {},
     "{cfg}:5:10: profile: unknown value 'fast' (expected one of: default, throughput, latency)"},
    // Command line.
    {"MissingConfigFile",
     nullptr,
     {"apply", "{root}/cfg/none.yaml"},
     "{root}/cfg/none.yaml: cannot read the config file: No such file or directory"},
    {"UnknownCommand",
     EXPORT_OK,
     {"aply", "{cfg}"},
     "unknown command 'aply' (expected doctor, plan, apply, status, rollback or serve)",
     2},
    {"PlanWithoutConfig",
     EXPORT_OK,
     {"plan"},
     "plan needs a CONFIG file (see configs/server.example.yaml)",
     2},
    {"RelativeRoot",
     EXPORT_OK,
     {"--root", "relative/dir", "apply", "{cfg}"},
     "--root 'relative/dir' must be an absolute path",
     2},
    {"MissingRoot",
     EXPORT_OK,
     {"--root", "{root}/nope", "apply", "{cfg}"},
     "--root '{root}/nope' is not an existing directory",
     2},
    {"StatusWithConfig", EXPORT_OK, {"status", "{cfg}"}, "status takes no CONFIG argument", 2},
    {"PortOutsideServe",
     EXPORT_OK,
     {"--port", "2050", "apply", "{cfg}"},
     "--port, --bind and --work-dir apply to serve only",
     2},
    {"UnknownFlag",
     EXPORT_OK,
     {"--frobnicate", "apply", "{cfg}"},
     "unrecognised option '--frobnicate'",
     2},
    {"ServeLeaseAboveGanesha",
     EXPORT_OK "nfsd:\n  lease_time: 600\n",
     {"serve", "{cfg}"},
     "{cfg}: nfsd lease_time 600 s is above nfs-ganesha's limit of 180 s for serve"},
    {"ServeKerberos",
     CLIENT("sec: [krb5p, sys]"),
     {"serve", "--dry-run", "{cfg}"},
     "{cfg}:4:9: export '/srv/nfsrdma/data' client '10.0.0.0/24' asks for sec=krb5p; serve "
     "(nfs-ganesha "
     "without Kerberos) serves sec=sys only"},
    {"AnonuidTooBig",
     CLIENT("options: [anonuid=4294967296]"),
     {},
     "{cfg}:5:19: exports[0].clients[0] option 'anonuid=4294967296': the id must be at most "
     "4294967295"},
    {"SecInOptions",
     CLIENT("options: [sec=sys:krb5i]"),
     {},
     "{cfg}:5:19: exports[0].clients[0] option 'sec=sys:krb5i': flavors go in the client's sec key "
     "(sec: [sys, krb5i]), which renders the export's one sec= list"},
    {"ServeBadPort",
     EXPORT_OK,
     {"serve", "--port", "99999", "{cfg}"},
     "--port 99999 is out of range 0..65535",
     2},
    // Host forms exportfs reads otherwise than as an address (client_gettype,
    // support/export/client.c): the rule named is the one of its class.
    {"HostGssPseudoClient",
     CLIENT("") "      - host: gss/krb5\n",
     {},
     "{cfg}:6:15: exports[0].clients[1] host 'gss/krb5': 'gss/' names exports(5)'s RPCSEC_GSS "
     "pseudo-client, deprecated in favour of the sec= option (mountd matches no client to it); "
     "give the clients' host or network and their flavors in the sec key (sec: [krb5])"},
    {"HostWildcardWithSlash",
     CLIENT("") "      - host: '*.example.com/24'\n",
     {},
     "host '*.example.com/24': '/' is not allowed in a host name"},
    // Host files nfs-utils reads in a way that cannot be known (issue 37):
    // apply and plan refuse, naming the file and line.
    {"NfsConfIncludeIsAFifo",
     EXPORT_OK,
     {},
     "refusing to apply: nfs-utils would not read the [nfsd] values set in /etc/nfs.conf as the "
     "plan sets them:\n  /etc/nfs.conf:2: include /etc/site.fifo is a FIFO; expected a regular "
     "file (nfs-utils would block opening it until something writes to it: nfsconf and the NFS "
     "server's start hang)",
     1,
     [](const StagedHost& h) {
       fifoAt(h, "etc/site.fifo");
       nfsConf("[nfsd]\ninclude = site.fifo\n")(h);
     }},
    {"NfsConfIncludeIsAFifoOnPlan",
     EXPORT_OK,
     {"plan", "{cfg}"},
     "nfsrdma-server: apply would refuse: 1 problem listed under \"Apply refuses\"",
     1,
     [](const StagedHost& h) {
       fifoAt(h, "etc/site.fifo");
       nfsConf("[nfsd]\ninclude = site.fifo\n")(h);
     },
     "  - /etc/nfs.conf:2: include /etc/site.fifo is a FIFO; expected a regular file"},
    {"NfsConfDLinksToAFifo",
     EXPORT_OK,
     {},
     "/etc/nfs.conf.d/10-site.conf is a FIFO; expected a regular file (nfs-utils would block "
     "opening it",
     1,
     [](const StagedHost& h) {
       fifoAt(h, "srv/pipe");
       h.mkdir("etc/nfs.conf.d");
       std::filesystem::create_symlink("/srv/pipe", h.root / "etc/nfs.conf.d/10-site.conf");
     }},
    {"NfsConfIncludeLoop",
     EXPORT_OK,
     {},
     "/etc/nfs.conf:2: include /etc/nfs.conf leads back to a file on its way (/etc/nfs.conf:2): "
     "nfs-utils follows includes without a limit, so it would recurse until it crashes",
     1,
     nfsConf("[nfsd]\ninclude = nfs.conf\n")},
    {"NfsConfIncludeChainLongerThanFollowed",
     EXPORT_OK,
     {},
     "/etc/c16.conf:1: include /etc/c17.conf is include number 17 of a chain (/etc/nfs.conf:2 -> ",
     1,
     [](const StagedHost& h) { includeChain(h, 17); }},
    // plan exits 1 where apply refuses, and says why under "Apply refuses".
    {"PlanWithTheStateDirectoryAFile",
     EXPORT_OK,
     {"plan", "{cfg}"},
     "apply would refuse: 1 problem",
     1,
     [](const StagedHost& h) { h.write("var/lib/nfsrdma", "not a directory\n"); },
     "  - /var/lib/nfsrdma (under --root {root}) is a regular file; expected a directory\n"},
    {"PlanWithAnUnreadableRecord",
     EXPORT_OK,
     {"plan", "{cfg}"},
     "apply would refuse: 1 problem",
     1,
     [](const StagedHost& h) { h.write("var/lib/nfsrdma/last-apply.yaml", "undo: [unclosed\n"); },
     "  - /var/lib/nfsrdma/last-apply.yaml (under --root {root}): line 2, column 1: unreadable "
     "apply record"},
    {"DryRunApplyWithARecordApplyNeverWrites",
     EXPORT_OK,
     {"--dry-run", "apply", "{cfg}"},
     "/var/lib/nfsrdma/last-apply.yaml (under --root {root}): undo step 2 (module): expected "
     "name nfsd, svcrdma or rpcrdma (got 'evil')",
     1,
     record("  - kind: module\n    name: evil\n")},
    // A hand-edited undo record: rollback accepts only what apply records.
    {"RecordKernelFileApplyNeverWrites",
     nullptr,
     {"rollback"},
     "undo step 2 (kernel /proc/fs/nfsd/unlock_ip): expected a path in /proc/fs/nfsd or "
     "/proc/sys/sunrpc/svc_rdma that apply writes (threads, versions, nfsv4leasetime, "
     "nfsv4gracetime, max_requests, max_req_size, max_outbound_read_requests); not an undo step "
     "apply writes, so nothing was changed",
     1,
     record("  - kind: kernel\n    path: /proc/fs/nfsd/unlock_ip\n    before: \"10.0.0.1\\n\"\n")},
    {"RecordKernelValueOnTwoLines",
     nullptr,
     {"rollback"},
     "undo step 2 (kernel /proc/fs/nfsd/nfsv4leasetime): expected before: a number of seconds "
     "10..3600 on one line, as the kernel reports it (got '90\\x0a60\\x0a')",
     1,
     record(
         "  - kind: kernel\n    path: /proc/fs/nfsd/nfsv4leasetime\n    before: \"90\\n60\\n\"\n")},
    {"RecordLeaseTimeOutOfRange",
     nullptr,
     {"rollback"},
     "(kernel /proc/fs/nfsd/nfsv4gracetime): expected before: a number of seconds 10..3600",
     1,
     record("  - kind: kernel\n    path: /proc/fs/nfsd/nfsv4gracetime\n    before: \"5\\n\"\n")},
    {"RecordSvcRdmaValueOutOfRange",
     nullptr,
     {"rollback"},
     "(kernel /proc/sys/sunrpc/svc_rdma/max_requests): expected before: a number 4..16384 on one "
     "line",
     1,
     record("  - kind: kernel\n    path: /proc/sys/sunrpc/svc_rdma/max_requests\n"
            "    before: \"100000\\n\"\n")},
    {"RecordVersionsThatAreNotVersions",
     nullptr,
     {"rollback"},
     "(kernel /proc/fs/nfsd/versions): expected before: versions such as '-2 +3 +4 +4.0 +4.1 "
     "+4.2' on one line, as the kernel reports it (got '+4.1 rdma 20049')",
     1,
     record(
         "  - kind: kernel\n    path: /proc/fs/nfsd/versions\n    before: \"+4.1 rdma 20049\"\n")},
    {"RecordThreadsAboveNfsdMaximum",
     nullptr,
     {"rollback"},
     "undo step 2 (threads): expected argv [<sbin or bin>/nfsdctl, threads, <count 0..8192>]",
     1,
     record("  - kind: threads\n    argv: [/usr/sbin/nfsdctl, threads, 99999]\n")},
    {"RecordListenerNotInThePortList",
     nullptr,
     {"rollback"},
     "undo step 2 (listener /proc/fs/nfsd/portlist): expected name '<tcp or rdma> <port "
     "1..65535>', a listener apply opens (got 'udp 2049')",
     1,
     record("  - kind: listener\n    path: /proc/fs/nfsd/portlist\n    name: udp 2049\n")},
    {"RecordListenerPortOutOfRange",
     nullptr,
     {"rollback"},
     "a listener apply opens (got 'rdma 70000')",
     1,
     record("  - kind: listener\n    path: /proc/fs/nfsd/portlist\n    name: rdma 70000\n")},
    {"RecordNfsConfValueWithANewline",
     nullptr,
     {"rollback"},
     "undo step 2 (file /etc/nfs.conf): expected [nfsd] threads values on one line, without "
     "control bytes, as nfs-utils reads a value (got '8\\x0a[general]\\x0ainclude=/etc/shadow')",
     1,
     record(NFS_CONF_STEP(
         "{section: nfsd, key: threads, before: \"8\\n[general]\\ninclude=/etc/shadow\", "
         "after: \"16\"}"))},
    {"RecordNfsConfKeyApplyNeverSets",
     nullptr,
     {"rollback"},
     "undo step 2 (file /etc/nfs.conf): expected keys apply sets, in [nfsd]: threads, vers3, "
     "vers4, vers4.0, vers4.1, vers4.2, lease-time, grace-time, tcp, port, rdma, rdma-port (got "
     "[nfsd] include)",
     1,
     record(NFS_CONF_STEP("{section: nfsd, key: include, before: \"/etc/shadow\"}"))},
    {"RecordNfsConfKeyInAnotherSection",
     nullptr,
     {"rollback"},
     "(got [general] threads)",
     1,
     record(NFS_CONF_STEP("{section: general, key: threads, before: \"8\"}"))},
    {"RecordNfsConfWholeFile",
     nullptr,
     {"rollback"},
     "undo step 2 (file /etc/nfs.conf): expected the [nfsd] keys apply set (it undoes "
     "/etc/nfs.conf key by key)",
     1,
     record("  - kind: file\n    path: /etc/nfs.conf\n    existed: true\n    backup: "
            "/var/lib/nfsrdma/backups/nfs.conf.20261201T000000Z\n")},
    {"RecordNfsConfWriteDigestNotHex",
     nullptr,
     {"rollback"},
     "undo step 2 (file /etc/nfs.conf): expected writes whose digests are 16 lowercase hex "
     "digits (got '0123456789abcdef', 'same as before')",
     1,
     record(NFS_CONF_STEP("{section: nfsd, key: threads, after: \"16\"}\n    writes:\n      - "
                          "{replaced: 0123456789abcdef, wrote: same as before}"))},
    {"RecordBackupOfAnotherFile",
     nullptr,
     {"rollback"},
     "undo step 2 (file /etc/nfs.conf): expected a backup in /var/lib/nfsrdma/backups named "
     "nfs.conf.<time>",
     1,
     record("  - kind: file\n    path: /etc/nfs.conf\n    existed: true\n    backup: "
            "/var/lib/nfsrdma/backups/last-apply.yaml.20261201T000000Z\n    keys: []\n")},
};

std::string substitute(std::string s, const std::string& cfg, const std::string& root) {
  for (auto [key, value] : {std::pair<std::string, std::string>{"{cfg}", cfg}, {"{root}", root}}) {
    for (auto p = s.find(key); p != std::string::npos; p = s.find(key, p + value.size()))
      s.replace(p, key.size(), value);
  }
  return s;
}

class BadInput : public ::testing::TestWithParam<BadCase> {};

}  // namespace

TEST(BadInputCases, AtLeastForty) {
  EXPECT_GE(kCases.size(), 40u);
}

TEST_P(BadInput, ClearErrorAndNothingWritten) {
  const BadCase& c = GetParam();
  StagedHost host;
  const std::string cfg = (host.root / "cfg/cfg.yaml").string();
  const std::string root = host.root.string();
  if (c.yaml != nullptr) host.write("cfg/cfg.yaml", c.yaml);
  if (c.setup) c.setup(host);
  const auto before = host.snapshot();

  std::vector<std::string> args = {"--root", root};
  const std::vector<std::string> rest =
      c.args.empty() ? std::vector<std::string>{"apply", "{cfg}"} : c.args;
  if (!rest.empty() && rest[0] == "--root") args.clear();
  for (const auto& a : rest) args.push_back(substitute(a, cfg, root));
  auto r = runTool(args);
  EXPECT_EQ(r.status, c.status) << r.err << r.out;
  EXPECT_NE(r.err.find(substitute(c.expect, cfg, root)), std::string::npos)
      << "expected:\n  " << substitute(c.expect, cfg, root) << "\ngot:\n  " << r.err;
  if (c.expectOut != nullptr) {
    EXPECT_NE(r.out.find(substitute(c.expectOut, cfg, root)), std::string::npos)
        << "expected on stdout:\n  " << substitute(c.expectOut, cfg, root) << "\ngot:\n  " << r.out;
  }
  EXPECT_EQ(host.snapshot(), before) << "a rejected input must not change any file";
}

INSTANTIATE_TEST_SUITE_P(Server, BadInput, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<BadCase>& i) {
                           return std::string(i.param.name);
                         });

// Not bad input: help asked for as a word (as nfsrdma-bench takes it) or as
// an option goes to stdout with status 0; no command at all is a usage error.
TEST(ServerCommandLine, HelpByWordOrOptionGoesToStdout) {
  for (const char* ask : {"help", "--help", "-h"}) {
    const auto r = runTool({ask});
    EXPECT_EQ(r.status, 0) << ask;
    EXPECT_EQ(r.out.rfind("usage: nfsrdma-server", 0), 0U) << ask << ": " << r.out;
    EXPECT_TRUE(r.err.empty()) << ask;
  }
  const auto none = runTool({});
  EXPECT_EQ(none.status, 2);
  EXPECT_TRUE(none.out.empty());
  EXPECT_EQ(none.err.rfind("usage: nfsrdma-server", 0), 0U) << none.err;
}

// --version, or version as a word, prints the build's one line on stdout
// and changes nothing; the usage names it.
TEST(ServerCommandLine, VersionByWordOrOptionGoesToStdout) {
  const std::string line = "nfsrdma-server " + std::string(nfsrdma::util::versionText()) + "\n";
  for (const char* ask : {"version", "--version"}) {
    const auto r = runTool({ask});
    EXPECT_EQ(r.status, 0) << ask;
    EXPECT_EQ(r.out, line) << ask;
    EXPECT_TRUE(r.err.empty()) << ask << ": " << r.err;
  }
  EXPECT_NE(runTool({"--help"}).out.find("nfsrdma-server --version"), std::string::npos);
}
