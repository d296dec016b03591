// exports(5) parser and renderer on real lines from the field notes and the
// issue, plus the syntax exportfs accepts and the errors it should give.
#include <gtest/gtest.h>

#include "server/ExportsFile.h"

using nfsrdma::server::ExportClient;
using nfsrdma::server::ExportsError;
using nfsrdma::server::ExportsFile;

namespace {

std::string roundTrip(const std::string& text) {
  return ExportsFile::parse(text, "exports").render();
}

std::string errorOf(const std::string& text) {
  try {
    ExportsFile::parse(text, "exports");
  } catch (const ExportsError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(ExportsFile, RealLinesRoundTrip) {
  for (const std::string line :
       {"/data1/nfs *(rw,sync,no_root_squash,no_all_squash)\n",
        "/mnt/nvme/share *(rw,sync,fsid=0,crossmnt,no_subtree_check)\n",
        "/srv/a 10.0.0.0/24(rw,insecure) host.example(ro) @lab(rw,sec=krb5p:sys)\n",
        "/srv/b -sync,ro 10.1.0.0/16 *(rw)\n", "/srv/c host\n"}) {
    EXPECT_EQ(roundTrip(line), line);
    const auto once = ExportsFile::parse(line, "exports");
    EXPECT_EQ(ExportsFile::parse(once.render(), "again").entries, once.entries);
  }
}

TEST(ExportsFile, ParsesTheFieldNotesLine) {
  // As typed in the field notes, with two spaces between path and client.
  auto f = ExportsFile::parse("/data1/nfs  *(rw,sync,no_root_squash,no_all_squash)", "exports");
  ASSERT_EQ(f.entries.size(), 1u);
  EXPECT_EQ(f.entries[0].path, "/data1/nfs");
  ASSERT_EQ(f.entries[0].clients.size(), 1u);
  EXPECT_EQ(f.entries[0].clients[0],
            (ExportClient{"*", {"rw", "sync", "no_root_squash", "no_all_squash"}}));
  EXPECT_EQ(f.render(), "/data1/nfs *(rw,sync,no_root_squash,no_all_squash)\n");
}

TEST(ExportsFile, FsidCrossmntLine) {
  auto f = ExportsFile::parse("/mnt/nvme/share *(rw,sync,fsid=0,crossmnt,no_subtree_check)\n",
                              "exports");
  const auto& c = f.entries.at(0).clients.at(0);
  EXPECT_EQ(nfsrdma::server::exportOptionValue(c, "fsid"), "0");
  EXPECT_TRUE(nfsrdma::server::hasExportOption(c, "crossmnt"));
  EXPECT_FALSE(nfsrdma::server::hasExportOption(c, "insecure"));
}

TEST(ExportsFile, CommentsContinuationsQuotesAndEscapes) {
  const std::string text =
      "# comment line\n"
      "\n"
      "/srv/one   10.0.0.1(rw) \\\n"
      "           10.0.0.2(ro)   # trailing comment\n"
      "\"/srv/with space\" *(ro)\n"
      "/srv/octal\\040dir *(ro)\n";
  auto f = ExportsFile::parse(text, "exports");
  ASSERT_EQ(f.entries.size(), 3u);
  EXPECT_EQ(f.entries[0].clients.size(), 2u);
  EXPECT_EQ(f.entries[0].line, 3);
  EXPECT_EQ(f.entries[1].path, "/srv/with space");
  EXPECT_EQ(f.entries[2].path, "/srv/octal dir");
  EXPECT_EQ(f.render(),
            "/srv/one 10.0.0.1(rw) 10.0.0.2(ro)\n"
            "\"/srv/with space\" *(ro)\n"
            "\"/srv/octal dir\" *(ro)\n");
  EXPECT_EQ(ExportsFile::parse(f.render(), "r").entries, f.entries);
}

TEST(ExportsFile, WorldWithoutHostIsKept) {
  // "/srv (rw)" - the classic space mistake: world access with rw.
  auto f = ExportsFile::parse("/srv (rw)\n", "exports");
  EXPECT_EQ(f.entries.at(0).clients.at(0).host, "");
  EXPECT_EQ(f.render(), "/srv (rw)\n");
}

TEST(ExportsFile, ErrorsNameLineAndColumn) {
  EXPECT_EQ(
      errorOf("/ok *(rw)\n/srv *(rw,rww)\n"),
      "exports:2:11: unknown export option 'rww' (expected e.g. rw, ro, sync, async, root_squash, "
      "no_root_squash, all_squash, insecure, crossmnt, no_subtree_check, fsid=N, sec=sys)");
  EXPECT_EQ(errorOf("srv *(rw)\n"),
            "exports:1:1: export path 'srv' must be absolute (start with '/')");
  EXPECT_EQ(errorOf("/srv *(rw,sync\n"), "exports:1:7: unterminated '(' in client options");
  EXPECT_EQ(errorOf("/srv *(rw,,sync)\n"), "exports:1:11: empty option (two commas in a row?)");
  EXPECT_EQ(errorOf("\"/srv *(rw)\n"), "exports:1:1: unterminated '\"' in export path");
  EXPECT_EQ(errorOf("/srv *(anonuid=abc)\n"), "exports:1:8: option 'anonuid=abc' needs a number");
  EXPECT_EQ(errorOf("/srv *(sec=krb6)\n"),
            "exports:1:8: option 'sec=krb6': unknown flavor 'krb6' (expected sys, krb5, krb5i, "
            "krb5p or none, "
            "':'-separated)");
  EXPECT_EQ(errorOf("/srv *(rw)x(ro)\n"),
            "exports:1:11: expected a blank after ')' before the next client");
}

// Client names and fsid= values as exportfs reads them; the rules are the
// ones the config's are (ValueValidationTest has each form).
TEST(ExportsFile, ClientsAndFsidsAreCheckedAsExportfsReadsThem) {
  EXPECT_EQ(errorOf("/srv 300.1.1.1/8(rw)\n"),
            "exports:1:6: client '300.1.1.1/8': '300.1.1.1' is not an IPv4 address (four numbers "
            "0..255)");
  EXPECT_NE(errorOf("/srv 10.0.0.1(ro) [fe80::1]/64(rw)\n")
                .find("exports:1:19: client '[fe80::1]/64': IPv6 addresses must not be in square "
                      "brackets"),
            std::string::npos);
  EXPECT_EQ(errorOf("/srv *(fsid=08)\n"),
            "exports:1:8: option 'fsid=08' is octal to exportfs (a leading 0), and '8' is not an "
            "octal digit; write 8");
  EXPECT_NE(errorOf("/srv *(fsid=abc)\n").find("option 'fsid=abc' must be a number"),
            std::string::npos);
  EXPECT_EQ(errorOf("/srv fe80::/64(rw) @lab(ro) *.example.com(ro) my_host(rw) (rw)\n"),
            "(no error)");
}

// exports(5) spells the mount point option mountpoint or mp, bare or with a path.
TEST(ExportsFile, MountpointIsAnOption) {
  for (const char* o : {"mp", "mountpoint", "mp=/srv", "mountpoint=/srv"}) {
    EXPECT_TRUE(nfsrdma::server::isKnownExportOption(o)) << o;
  }
  EXPECT_FALSE(nfsrdma::server::isKnownExportOption("mountpoints"));
}
