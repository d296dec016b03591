// writeFileAtomically through a symlink: an /etc/nfs.conf that links to a
// file kept elsewhere stays a link, and the file it points to gets the new
// content with its own mode; a dangling link is an error naming both.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "server/AtomicFile.h"
#include "tests/unit/server/StagedHost.h"

using nfsrdma::server::backupFile;
using nfsrdma::server::firstUnusedPath;
using nfsrdma::server::writeFileAtomically;
using nfsrdma::server::testing::StagedHost;
namespace fs = std::filesystem;

namespace {

TEST(AtomicFile, WritesThroughASymlinkAndKeepsIt) {
  StagedHost host;
  host.write("etc/nfs/nfs.conf", "[nfsd]\nthreads=8\n");
  fs::permissions(host.root / "etc/nfs/nfs.conf", fs::perms(0640));
  fs::remove(host.root / "etc/nfs.conf");
  fs::create_symlink("nfs/nfs.conf", host.root / "etc/nfs.conf");
  writeFileAtomically(host.root / "etc/nfs.conf", "[nfsd]\nthreads=16\n");
  EXPECT_TRUE(fs::is_symlink(host.root / "etc/nfs.conf"));
  EXPECT_EQ(fs::read_symlink(host.root / "etc/nfs.conf"), "nfs/nfs.conf");
  EXPECT_EQ(host.read("etc/nfs/nfs.conf"), "[nfsd]\nthreads=16\n");
  EXPECT_EQ(fs::status(host.root / "etc/nfs/nfs.conf").permissions(), fs::perms(0640));
  // No temporary file is left beside the link or the target.
  for (const char* dir : {"etc", "etc/nfs"}) {
    for (const auto& e : fs::directory_iterator(host.root / dir)) {
      EXPECT_EQ(e.path().filename().string().find(".nfsrdma-"), std::string::npos) << e.path();
    }
  }
}

TEST(AtomicFile, DanglingSymlinkIsAnErrorNamingItsTarget) {
  StagedHost host;
  fs::remove(host.root / "etc/nfs.conf");
  fs::create_symlink("nfs/missing.conf", host.root / "etc/nfs.conf");
  try {
    writeFileAtomically(host.root / "etc/nfs.conf", "x\n");
    FAIL() << "wrote through a dangling link";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write " + (host.root / "etc/nfs.conf").string() +
                                         ": it is a symlink to nfs/missing.conf, which cannot be resolved "
                                         "(No such file or directory)");
  }
  EXPECT_TRUE(fs::is_symlink(host.root / "etc/nfs.conf"));
}

// In a --root staging tree an absolute link target is read inside the tree:
// a copied /etc/nfs.conf -> /etc/nfs/nfs.conf edits the tree's file, never
// the live host's; a link that climbs out of the tree is refused.
TEST(AtomicFile, AbsoluteLinkIsFollowedInsideTheRoot) {
  StagedHost host;
  host.write("etc/nfs/nfs.conf", "[nfsd]\nthreads=8\n");
  fs::remove(host.root / "etc/nfs.conf");
  fs::create_symlink("/etc/nfs/nfs.conf", host.root / "etc/nfs.conf");
  writeFileAtomically(host.root / "etc/nfs.conf", "[nfsd]\nthreads=16\n", fs::perms(0644), host.root);
  EXPECT_EQ(host.read("etc/nfs/nfs.conf"), "[nfsd]\nthreads=16\n");
  EXPECT_TRUE(fs::is_symlink(host.root / "etc/nfs.conf"));
}

TEST(AtomicFile, LinkLeavingTheRootIsRefused) {
  StagedHost host;
  StagedHost outside;  // another tree standing for the live host
  outside.write("victim.conf", "untouched\n");
  fs::remove(host.root / "etc/nfs.conf");
  const fs::path target = fs::relative(outside.root / "victim.conf", host.root / "etc");
  fs::create_symlink(target, host.root / "etc/nfs.conf");
  try {
    writeFileAtomically(host.root / "etc/nfs.conf", "x\n", fs::perms(0644), host.root);
    ADD_FAILURE() << "wrote through a link out of the root";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write " + (host.root / "etc/nfs.conf").string() +
                                         ": it is a symlink to " + target.string() + ", which leads outside " +
                                         host.root.string());
  }
  EXPECT_EQ(outside.read("victim.conf"), "untouched\n");
}

// Backups named by the same second (two applies in a row) each keep their
// own bytes: none replaces another.
TEST(AtomicFile, BackupsInOneSecondAreAllKept) {
  StagedHost host;
  std::vector<fs::path> made;
  for (const char* version : {"threads=1\n", "threads=2\n", "threads=3\n"}) {
    host.write("etc/nfs.conf", version);
    auto b = backupFile(host.root / "etc/nfs.conf", host.root / "backups", "20261130T120000Z");
    ASSERT_TRUE(b.has_value());
    made.push_back(*b);
  }
  EXPECT_EQ(made[0].filename(), "nfs.conf.20261130T120000Z");
  EXPECT_EQ(made[1].filename(), "nfs.conf.20261130T120000Z.1");
  EXPECT_EQ(made[2].filename(), "nfs.conf.20261130T120000Z.2");
  EXPECT_EQ(host.read("backups/nfs.conf.20261130T120000Z"), "threads=1\n");
  EXPECT_EQ(host.read("backups/nfs.conf.20261130T120000Z.2"), "threads=3\n");
}

// A dangling symlink takes the name too: writing there would go elsewhere.
TEST(AtomicFile, FirstUnusedPathSkipsFilesAndLinks) {
  StagedHost host;
  const fs::path base = host.root / "var/rec";
  EXPECT_EQ(firstUnusedPath(base), base);
  host.write("var/rec", "a");
  fs::create_symlink("nowhere", host.root / "var/rec.1");
  EXPECT_EQ(firstUnusedPath(base).filename(), "rec.2");
}

}  // namespace
