// nfs.conf editing keeps every byte that is not one of our keys, and reads
// nfs.conf, its includes and nfs.conf.d as nfs-utils does (nfsconf, when
// installed, is the oracle) or refuses where that cannot be known.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "server/CommandRunner.h"
#include "server/NfsConf.h"
#include "tests/unit/server/StagedHost.h"

using nfsrdma::server::NfsConf;

TEST(NfsConf, SettingNothingNewKeepsTheBytes) {
  const std::string text = nfsrdma::server::testing::kSampleNfsConf;
  NfsConf c(text);
  EXPECT_EQ(c.text(), text);
  EXPECT_FALSE(c.set("nfsd", "lease-time", "90"));  // same value: not even respaced
  EXPECT_EQ(c.text(), text);
}

TEST(NfsConf, ReadsValuesIgnoringComments) {
  NfsConf c(nfsrdma::server::testing::kSampleNfsConf);
  EXPECT_EQ(c.get("nfsd", "lease-time"), "90");
  EXPECT_EQ(c.get("NFSD", "Lease-Time"), "90");
  EXPECT_EQ(c.get("nfsd", "threads"), std::nullopt);  // only "# threads=8"
  EXPECT_EQ(c.get("exportfs", "debug"), "0");
  EXPECT_EQ(c.get("mountd", "descriptors"), "0");
  EXPECT_EQ(c.get("nope", "x"), std::nullopt);
}

TEST(NfsConf, ChangesOnlyTheValueInPlace) {
  const std::string text = "[nfsd]\n  lease-time  =   90   \nthreads=8\n[other]\nthreads=3\n";
  NfsConf c(text);
  EXPECT_TRUE(c.set("nfsd", "lease-time", "60"));
  EXPECT_TRUE(c.set("nfsd", "threads", "64"));
  EXPECT_EQ(c.text(), "[nfsd]\n  lease-time  =   60   \nthreads=64\n[other]\nthreads=3\n");
}

TEST(NfsConf, AddsMissingKeysAtTheEndOfTheSection) {
  NfsConf c("[general]\nx=1\n\n[nfsd]\n# rdma=n\n\n[mountd]\ny=2");
  EXPECT_TRUE(c.set("nfsd", "rdma", "y"));
  EXPECT_TRUE(c.set("nfsd", "rdma-port", "20049"));
  EXPECT_EQ(c.text(),
            "[general]\nx=1\n\n[nfsd]\n# rdma=n\nrdma=y\nrdma-port=20049\n\n[mountd]\ny=2");
}

TEST(NfsConf, AddsTheSectionWhenAbsentBeforeAnUnterminatedLastLine) {
  // nfs-utils ignores "x=1" without its newline; ending it would switch it on.
  NfsConf c("[general]\nx=1");
  EXPECT_TRUE(c.set("nfsd", "threads", "16"));
  EXPECT_EQ(c.text(), "[general]\n\n[nfsd]\nthreads=16\nx=1");
  NfsConf terminated("[general]\nx=1\n");
  EXPECT_TRUE(terminated.set("nfsd", "threads", "16"));
  EXPECT_EQ(terminated.text(), "[general]\nx=1\n\n[nfsd]\nthreads=16\n");
  NfsConf empty("");
  empty.set("nfsd", "rdma", "y");
  EXPECT_EQ(empty.text(), "[nfsd]\nrdma=y\n");
}

TEST(NfsConf, LastAssignmentWinsAndIsTheOneEdited) {
  NfsConf c("[nfsd]\nthreads=4\nthreads=8\n");
  EXPECT_EQ(c.get("nfsd", "threads"), "8");
  c.set("nfsd", "threads", "16");
  EXPECT_EQ(c.text(), "[nfsd]\nthreads=4\nthreads=16\n");
  EXPECT_TRUE(c.remove("nfsd", "threads"));
  EXPECT_EQ(c.text(), "[nfsd]\n");
}

TEST(NfsConf, CrlfAndTabsSurvive) {
  const std::string text = "[nfsd]\r\n\tvers3 = y\r\n# c\r\n";
  NfsConf c(text);
  EXPECT_TRUE(c.set("nfsd", "vers3", "n"));
  EXPECT_EQ(c.text(), "[nfsd]\r\n\tvers3 = n\r\n# c\r\n");
}

// The cases below follow nfs-utils' conffile.c; each expected value was
// checked with `nfsconf --file F --get nfsd KEY` (nfs-utils 2.6.2).

TEST(NfsConf, SectionsOfTheSameNameMergeAndTheLastAssignmentIsEdited) {
  const std::string text =
      "[nfsd]\n# threads=8\nthreads=16\n\n[mountd]\nmanage-gids=y\n\n[nfsd]\nthreads=4\n";
  NfsConf c(text);
  EXPECT_EQ(c.get("nfsd", "threads"), "4");  // nfsconf: 4
  EXPECT_TRUE(c.set("nfsd", "threads", "16"));
  EXPECT_EQ(c.text(),
            "[nfsd]\n# threads=8\nthreads=16\n\n[mountd]\nmanage-gids=y\n\n[nfsd]\nthreads=16\n");
  // A key in neither goes to the last [nfsd], after the assignments it could shadow.
  EXPECT_TRUE(c.set("nfsd", "rdma", "y"));
  EXPECT_EQ(c.text(),
            "[nfsd]\n# threads=8\nthreads=16\n\n[mountd]\nmanage-gids=y\n\n[nfsd]\n"
            "threads=16\nrdma=y\n");
  EXPECT_TRUE(c.remove("nfsd", "threads"));
  EXPECT_EQ(c.text(), "[nfsd]\n# threads=8\n\n[mountd]\nmanage-gids=y\n\n[nfsd]\nrdma=y\n");
}

TEST(NfsConf, ABackslashContinuesTheLine) {
  // nfs-utils joins "...\<newline>" with the next line: here threads=4 is
  // part of the comment, so threads is unset.
  const std::string text = "[nfsd]\n# old setting, see wiki \\\nthreads=4\n";
  NfsConf c(text);
  EXPECT_EQ(c.get("nfsd", "threads"), std::nullopt);  // nfsconf: unset
  EXPECT_TRUE(c.set("nfsd", "threads", "16"));
  EXPECT_EQ(c.text(), text + "threads=16\n");
  EXPECT_EQ(c.get("nfsd", "threads"), "16");

  // A value continued on the next line: only its token is replaced.
  NfsConf v("[nfsd]\nthreads = \\\n 8\nrdma=y\n");
  EXPECT_EQ(v.get("nfsd", "threads"), "8");  // nfsconf: 8
  EXPECT_TRUE(v.set("nfsd", "threads", "16"));
  EXPECT_EQ(v.text(), "[nfsd]\nthreads = \\\n 16\nrdma=y\n");
}

TEST(NfsConf, AnInlineCommentIsNotPartOfTheValueAndIsKept) {
  const std::string text = "[nfsd]\nthreads = 16   # sized for 2 NICs\nport=2049;default\n";
  NfsConf c(text);
  EXPECT_EQ(c.get("nfsd", "threads"), "16");  // nfsconf: 16
  EXPECT_EQ(c.get("nfsd", "port"), "2049");   // nfsconf: 2049
  EXPECT_FALSE(c.set("nfsd", "threads", "16"));
  EXPECT_FALSE(c.set("nfsd", "port", "2049"));
  EXPECT_EQ(c.text(), text);
  EXPECT_TRUE(c.set("nfsd", "threads", "32"));
  EXPECT_TRUE(c.set("nfsd", "port", "2050"));
  EXPECT_EQ(c.text(), "[nfsd]\nthreads = 32   # sized for 2 NICs\nport=2050;default\n");
}

TEST(NfsConf, QuotedValuesCompareByTheirContentAndKeepTheQuotes) {
  const std::string text = "[nfsd]\nthreads=\"16\"\nvers3 = 'n' # no v3\n";
  NfsConf c(text);
  EXPECT_EQ(c.get("nfsd", "threads"), "16");  // nfsconf: 16
  EXPECT_EQ(c.get("nfsd", "vers3"), "n");     // nfsconf: n
  EXPECT_FALSE(c.set("nfsd", "threads", "16"));
  EXPECT_FALSE(c.set("nfsd", "vers3", "n"));
  EXPECT_EQ(c.text(), text);
  EXPECT_TRUE(c.set("nfsd", "threads", "8"));
  EXPECT_TRUE(c.set("nfsd", "vers3", "y"));
  EXPECT_EQ(c.text(), "[nfsd]\nthreads=\"8\"\nvers3 = 'y' # no v3\n");
}

TEST(NfsConf, BooleanSynonymsMeanTheSame) {
  const std::string text = "[nfsd]\nvers3 = no\nrdma=On\ntcp=1\nvers4.0=FALSE\n";
  NfsConf c(text);
  EXPECT_FALSE(c.set("nfsd", "vers3", "n"));
  EXPECT_FALSE(c.set("nfsd", "rdma", "y"));
  EXPECT_FALSE(c.set("nfsd", "tcp", "y"));
  EXPECT_FALSE(c.set("nfsd", "vers4.0", "n"));
  EXPECT_EQ(c.text(), text);
  EXPECT_TRUE(c.set("nfsd", "vers3", "y"));
  EXPECT_EQ(c.text(), "[nfsd]\nvers3 = y\nrdma=On\ntcp=1\nvers4.0=FALSE\n");

  using nfsrdma::server::nfsConfSameValue;
  EXPECT_TRUE(nfsConfSameValue("yes", "y"));
  EXPECT_TRUE(nfsConfSameValue("0", "n"));
  EXPECT_FALSE(nfsConfSameValue("y", "1"));  // "1" may be a number (threads=1)
  EXPECT_FALSE(nfsConfSameValue("016", "16"));
  EXPECT_FALSE(nfsConfSameValue("maybe", "y"));
}

TEST(NfsConf, WhatNfsUtilsIgnoresIsNotAValue) {
  // A last line without a newline: "last line non-terminated, ignored".
  NfsConf unterminated("[nfsd]\nthreads=8");
  EXPECT_EQ(unterminated.get("nfsd", "threads"), std::nullopt);  // nfsconf: unset
  EXPECT_TRUE(unterminated.set("nfsd", "threads", "16"));
  // Ours goes before it: ending that line would switch it on.
  EXPECT_EQ(unterminated.text(), "[nfsd]\nthreads=16\nthreads=8");
  NfsConf otherSection("[mountd]\nmanage-gids=y");
  EXPECT_TRUE(otherSection.set("nfsd", "threads", "16"));
  EXPECT_EQ(otherSection.text(), "[mountd]\n\n[nfsd]\nthreads=16\nmanage-gids=y");
  EXPECT_EQ(otherSection.get("mountd", "manage-gids"),
            std::nullopt);  // still ignored, as nfsconf does
  // An empty value sets nothing: the one before stays.
  NfsConf empty("[nfsd]\nthreads=16\nthreads=\n");
  EXPECT_EQ(empty.get("nfsd", "threads"), "16");  // nfsconf: 16
  EXPECT_FALSE(empty.set("nfsd", "threads", "16"));
  // [nfsd "x"] threads replaces [nfsd] threads, and is not [nfsd]'s.
  NfsConf arg("[nfsd]\nthreads=16\n[nfsd \"x\"]\nthreads=3\n");
  EXPECT_EQ(arg.get("nfsd", "threads"), std::nullopt);  // nfsconf: unset
  // An unmatched quote drops the line.
  NfsConf quote("[nfsd]\nthreads=16\nthreads=\"8\n");
  EXPECT_EQ(quote.get("nfsd", "threads"), "16");
}

namespace {

using nfsrdma::server::EffectiveNfsConf;
using nfsrdma::server::HostPaths;
using nfsrdma::server::testing::StagedHost;

std::string where(const std::optional<nfsrdma::server::NfsConfOrigin>& o) {
  if (!o) return "(unset)";
  return o->value + " @" + o->file + ":" + std::to_string(o->line) +
         (o->includedFrom.empty() ? "" : " via " + o->includedFrom);
}

}  // namespace

TEST(EffectiveNfsConf, NfsConfDOverridesInVersionOrderAndOnlyDotConfFiles) {
  StagedHost host;
  const std::string conf = "[nfsd]\nthreads=16\nrdma=y\n";
  host.write("etc/nfs.conf.d/a9.conf", "[nfsd]\nthreads=9\n");
  host.write("etc/nfs.conf.d/a10.conf", "[nfsd]\n\nthreads=10\n");  // after a9 (versionsort)
  host.write("etc/nfs.conf.d/z.txt", "[nfsd]\nrdma=n\n");           // not *.conf
  host.write("etc/nfs.conf.d/.hidden.conf", "[nfsd]\nrdma=n\n");    // hidden
  host.write("etc/nfs.conf.d/b.conf", "threads=1\n");               // no section: ignored
  const EffectiveNfsConf e(HostPaths(host.root), conf);
  EXPECT_EQ(where(e.get("nfsd", "threads")), "10 @/etc/nfs.conf.d/a10.conf:3");
  EXPECT_EQ(where(e.get("NFSD", "rdma")), "y @/etc/nfs.conf:3");
  EXPECT_TRUE(e.warnings().empty());
}

TEST(EffectiveNfsConf, IncludesAreReadWhereTheyAppearInTheIncludersSection) {
  StagedHost host;
  host.write("etc/nfs-site.conf", "threads=4\nrdma=n\n[mountd]\nx=1\n");
  const std::string conf =
      "[nfsd]\nthreads=16\ninclude = nfs-site.conf\nrdma=y\ninclude=-/etc/absent.conf\n"
      "[mountd]\ninclude=/etc/missing.conf\n";
  const EffectiveNfsConf e(HostPaths(host.root), conf);
  EXPECT_EQ(where(e.get("nfsd", "threads")), "4 @/etc/nfs-site.conf:1 via /etc/nfs.conf:3");
  EXPECT_EQ(where(e.get("nfsd", "rdma")), "y @/etc/nfs.conf:4");
  EXPECT_EQ(where(e.get("mountd", "x")), "1 @/etc/nfs-site.conf:4 via /etc/nfs.conf:3");
  // The optional include ('-') is silent; the other is skipped, as nfs-utils does, and said.
  ASSERT_EQ(e.warnings().size(), 1u);
  EXPECT_EQ(e.warnings()[0],
            "/etc/nfs.conf:7: include /etc/missing.conf cannot be read; "
            "nfs-utils skips it too");
}

// `a`, a NUL byte, `b`.
std::string withNul(const std::string& a, const std::string& b) {
  return a + std::string(1, '\0') + b;
}

// nfs-utils reads the whole file but parses it only up to its first NUL byte
// (conf_parse stops at strlen), and the line the NUL cuts short is a last line
// without a newline, which it ignores. The editor reads the same, adds our
// keys where nfs-utils still reads them, and keeps every byte from the NUL on.
TEST(NfsConf, ANulByteEndsWhatIsReadAndItsBytesAreKept) {
  const std::string afterLine = withNul("[nfsd]\nthreads=8\n", "\nthreads=16\n");
  NfsConf c(afterLine);
  EXPECT_EQ(c.get("nfsd", "threads"), "8");  // nfsconf --get nfsd threads: 8
  ASSERT_TRUE(c.cutAtNul());
  EXPECT_EQ(c.cutAtNul()->line, 3u);
  EXPECT_EQ(c.cutAtNul()->ignoredBytes, 13u);
  EXPECT_TRUE(c.set("nfsd", "threads", "32"));
  EXPECT_TRUE(c.set("nfsd", "rdma", "y"));
  EXPECT_EQ(c.text(), withNul("[nfsd]\nthreads=32\nrdma=y\n", "\nthreads=16\n"));

  const std::string midLine = withNul("[nfsd]\nthreads=8\nthreads=9", "x\nthreads=16\n");
  NfsConf cut(midLine);
  EXPECT_EQ(cut.get("nfsd", "threads"), "8");  // "threads=9" is cut short: ignored
  EXPECT_EQ(cut.cutAtNul()->line, 3u);
  EXPECT_TRUE(cut.set("nfsd", "rdma", "y"));
  EXPECT_EQ(cut.text(), withNul("[nfsd]\nthreads=8\nrdma=y\nthreads=9", "x\nthreads=16\n"));
  EXPECT_FALSE(NfsConf("[nfsd]\nthreads=8\n").cutAtNul());
}

namespace {

// Creates a FIFO, and a character device like /dev/null (when this user may).
bool makeNode(const std::filesystem::path& p, mode_t mode) {
  std::filesystem::create_directories(p.parent_path());
  return ::mknod(p.c_str(), mode, S_ISCHR(mode) ? ::makedev(1, 3) : 0) == 0;
}

// The include chain etc/c1.conf -> c2.conf -> ... -> c<n>.conf, the last one
// setting threads=<n>; nfs.conf includes c1.conf from [nfsd].
std::string writeIncludeChain(const StagedHost& host, int n) {
  for (int i = 1; i < n; ++i)
    host.write("etc/c" + std::to_string(i) + ".conf",
               "include = c" + std::to_string(i + 1) + ".conf\n");
  host.write("etc/c" + std::to_string(n) + ".conf", "threads=" + std::to_string(n) + "\n");
  return "[nfsd]\nthreads=1\ninclude = c1.conf\n";
}

bool has(const std::vector<std::string>& lines, const std::string& what) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(what) != std::string::npos; });
}

}  // namespace

TEST(EffectiveNfsConf, ANulByteEndsAnIncludedFileAndIsSaid) {
  StagedHost host;
  host.write("etc/nfs-site.conf", withNul("threads=4\n", "threads=5\n"));
  const EffectiveNfsConf e(HostPaths(host.root), "[nfsd]\ninclude = nfs-site.conf\n");
  EXPECT_EQ(where(e.get("nfsd", "threads")), "4 @/etc/nfs-site.conf:1 via /etc/nfs.conf:2");
  EXPECT_EQ(e.warnings(), std::vector<std::string>{
                              "/etc/nfs-site.conf:2: a NUL byte; nfs-utils reads nothing from "
                              "there on (11 bytes), and neither does nfsrdma-server, which keeps "
                              "them as they are"});
  EXPECT_TRUE(e.refusals().empty());
}

// nfs-utils follows includes without a limit; we follow kMaxIncludeDepth and
// refuse a longer chain instead of guessing what nfs-utils reads at its end.
TEST(EffectiveNfsConf, AChainLongerThanItFollowsIsRefused) {
  StagedHost host;
  const HostPaths paths(host.root);
  const EffectiveNfsConf sixteen(paths, writeIncludeChain(host, 16));
  EXPECT_EQ(where(sixteen.get("nfsd", "threads")), "16 @/etc/c16.conf:1 via /etc/c15.conf:1");
  EXPECT_TRUE(sixteen.refusals().empty());
  const EffectiveNfsConf seventeen(paths, writeIncludeChain(host, 17));
  ASSERT_EQ(seventeen.refusals().size(), 1u);
  EXPECT_EQ(seventeen.refusals()[0],
            "/etc/c16.conf:1: include /etc/c17.conf is include number 17 of a chain "
            "(/etc/nfs.conf:3 -> /etc/c1.conf:1 -> /etc/c2.conf:1 -> /etc/c3.conf:1 -> "
            "/etc/c4.conf:1 -> /etc/c5.conf:1 -> /etc/c6.conf:1 -> /etc/c7.conf:1 -> "
            "/etc/c8.conf:1 -> /etc/c9.conf:1 -> /etc/c10.conf:1 -> /etc/c11.conf:1 -> "
            "/etc/c12.conf:1 -> /etc/c13.conf:1 -> /etc/c14.conf:1 -> /etc/c15.conf:1 -> "
            "/etc/c16.conf:1); nfsrdma-server follows 16 and nfs-utils any number, so what "
            "nfs-utils reads there is not known; expected a chain of at most 16 includes");
}

// A loop makes nfs-utils recurse until its stack runs out (nfsconf: SIGSEGV).
TEST(EffectiveNfsConf, AnIncludeLoopIsRefused) {
  StagedHost host;
  host.write("etc/a.conf", "threads=2\ninclude = ./b.conf\n");
  host.write("etc/b.conf", "include = /etc/a.conf\n");
  const EffectiveNfsConf e(HostPaths(host.root), "[nfsd]\ninclude = a.conf\n");
  EXPECT_EQ(e.refusals(),
            std::vector<std::string>{
                // Named as nfs-utils names it: the includer's directory, '/', the value.
                "/etc/./b.conf:1: include /etc/a.conf leads back to a file on its way "
                "(/etc/nfs.conf:2 -> /etc/a.conf:2 -> /etc/./b.conf:1): nfs-utils follows includes "
                "without a limit, so it would recurse until it crashes (nfsconf dies of a "
                "segmentation fault); expected includes without a loop"});
  const EffectiveNfsConf self(HostPaths(host.root), "[nfsd]\ninclude = nfs.conf\n");
  ASSERT_EQ(self.refusals().size(), 1u);
  EXPECT_TRUE(has(self.refusals(), "/etc/nfs.conf:2: include /etc/nfs.conf leads back"));
}

// conf_readfile opens what it includes: a FIFO blocks it (nfsconf and the NFS
// server's start hang), a device is read as configuration. Both are refused,
// looked at without being opened; a directory or socket it cannot read and
// skips, as we do, with a warning.
TEST(EffectiveNfsConf, AFifoOrDeviceIncludeIsRefusedWithoutOpeningIt) {
  StagedHost host;
  ASSERT_TRUE(makeNode(host.root / "etc/site.fifo", S_IFIFO | 0600));
  host.mkdir("etc/site.d");
  const bool device = makeNode(host.root / "etc/null.dev", S_IFCHR | 0600);
  const EffectiveNfsConf e(
      HostPaths(host.root),
      "[nfsd]\ninclude = site.fifo\ninclude = -site.fifo\ninclude = site.d\ninclude = null.dev\n");
  const std::string fifo =
      " is a FIFO; expected a regular file (nfs-utils would block opening it until something "
      "writes to it: nfsconf and the NFS server's start hang)";
  std::vector<std::string> want = {"/etc/nfs.conf:2: include /etc/site.fifo" + fifo,
                                   "/etc/nfs.conf:3: include /etc/site.fifo" + fifo};
  if (device) {
    want.push_back(
        "/etc/nfs.conf:5: include /etc/null.dev is a character device; expected a "
        "regular file (nfs-utils would read the device's bytes as configuration)");
  }
  EXPECT_EQ(e.refusals(), want);
  EXPECT_EQ(e.warnings(),
            std::vector<std::string>{"/etc/nfs.conf:4: include /etc/site.d cannot "
                                     "be read (a directory); nfs-utils skips it too"});
  if (!device) GTEST_SKIP() << "mknod of a character device needs CAP_MKNOD; the FIFO was checked";
}

// An nfs.conf.d entry that links to a FIFO is opened by nfs-utils (it reads
// DT_LNK entries); one that is a FIFO itself too, where the file system does
// not report entry types. Both are refused.
TEST(EffectiveNfsConf, AnNfsConfDFifoIsRefused) {
  StagedHost host;
  ASSERT_TRUE(makeNode(host.root / "srv/pipe", S_IFIFO | 0600));
  ASSERT_TRUE(makeNode(host.root / "etc/nfs.conf.d/20-pipe.conf", S_IFIFO | 0600));
  std::filesystem::create_symlink("/srv/pipe", host.root / "etc/nfs.conf.d/10-link.conf");
  const EffectiveNfsConf e(HostPaths(host.root), std::nullopt);
  ASSERT_EQ(e.refusals().size(), 2u);
  EXPECT_EQ(
      e.refusals()[0].rfind("/etc/nfs.conf.d/10-link.conf is a FIFO; expected a regular file", 0),
      0u);
  EXPECT_EQ(
      e.refusals()[1].rfind("/etc/nfs.conf.d/20-pipe.conf is a FIFO; expected a regular file", 0),
      0u);
}

// nfsconf of the host's nfs-utils is the oracle: what it reads from files
// with a NUL byte, a long include chain and our edit of them is what
// EffectiveNfsConf reads.
TEST(EffectiveNfsConf, ReadsWhatNfsconfReads) {
  const std::string nfsconf = nfsrdma::server::findHostTool(HostPaths("/"), "nfsconf");
  if (nfsconf.empty()) GTEST_SKIP() << "nfsconf (nfs-common) is not installed: no oracle";
  StagedHost host;
  const std::string chain = writeIncludeChain(host, 16);
  host.write("etc/nul-site.conf", withNul("threads=4\n", "threads=5\n"));
  NfsConf edited(withNul("[nfsd]\nthreads=8\nthreads=9", "x\nthreads=16\n"));
  edited.set("nfsd", "threads", "12");
  const std::string cases[] = {
      withNul("[nfsd]\nthreads=8\n", "\nthreads=16\n"),
      withNul("[nfsd]\nthreads=8\nthreads=9", "x\nthreads=16\n"),
      chain,
      "[nfsd]\nthreads=3\ninclude = nul-site.conf\n",
      edited.text(),
  };
  for (const std::string& conf : cases) {
    host.write("etc/nfs.conf", conf);
    const std::string file = (host.root / "etc/nfs.conf").string();
    // stderr dropped: nfsconf warns there ("last line non-terminated").
    const std::string cmd =
        "timeout 10 '" + nfsconf + "' --file '" + file + "' --get nfsd threads 2>/dev/null";
    FILE* p = ::popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string got;
    char buf[256];
    while (std::fgets(buf, sizeof buf, p) != nullptr) got += buf;
    const int status = ::pclose(p);
    while (!got.empty() && got.back() == '\n') got.pop_back();
    const auto ours = EffectiveNfsConf(HostPaths(host.root), conf).get("nfsd", "threads");
    EXPECT_EQ(ours ? ours->value : "(unset)", status == 0 ? got : "(unset)") << conf;
  }
}
