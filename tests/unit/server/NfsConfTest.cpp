// nfs.conf editing keeps every byte that is not one of our keys.
#include <gtest/gtest.h>

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
  EXPECT_EQ(c.text(), "[nfsd]\n# threads=8\nthreads=16\n\n[mountd]\nmanage-gids=y\n\n[nfsd]\n"
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
  EXPECT_EQ(otherSection.get("mountd", "manage-gids"), std::nullopt);  // still ignored, as nfsconf does
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
  EXPECT_EQ(e.warnings()[0], "/etc/nfs.conf:7: include /etc/missing.conf cannot be read; "
                             "nfs-utils skips it too");
}
