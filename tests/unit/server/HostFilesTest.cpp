// Host files through HostFiles: an /etc/nfs.conf that links to a file kept
// elsewhere in the root stays a link, and the file it points to gets the new
// content with its own mode; a dangling link or one leaving the root is an
// error naming both. Our own files and /proc are never reached through a
// link, and read-only probes resolve links inside the root.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "server/CommandRunner.h"
#include "server/HostFiles.h"
#include "server/NfsConf.h"
#include "tests/unit/server/StagedHost.h"

using nfsrdma::server::backupHostFile;
using nfsrdma::server::firstUnusedHostPath;
using nfsrdma::server::HostPaths;
using nfsrdma::server::PathRefused;
using nfsrdma::server::readHostFile;
using nfsrdma::server::writeHostFile;
using nfsrdma::server::writeProcValue;
using nfsrdma::server::testing::StagedHost;
namespace fs = std::filesystem;

namespace {

TEST(HostFiles, WritesThroughASymlinkAndKeepsIt) {
  StagedHost host;
  host.write("etc/nfs/nfs.conf", "[nfsd]\nthreads=8\n");
  fs::permissions(host.root / "etc/nfs/nfs.conf", fs::perms(0640));
  fs::remove(host.root / "etc/nfs.conf");
  fs::create_symlink("nfs/nfs.conf", host.root / "etc/nfs.conf");
  writeHostFile(HostPaths(host.root), "/etc/nfs.conf", "[nfsd]\nthreads=16\n");
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

TEST(HostFiles, DanglingSymlinkIsAnErrorNamingItsTarget) {
  StagedHost host;
  fs::remove(host.root / "etc/nfs.conf");
  fs::create_symlink("nfs/missing.conf", host.root / "etc/nfs.conf");
  try {
    writeHostFile(HostPaths(host.root), "/etc/nfs.conf", "x\n");
    FAIL() << "wrote through a dangling link";
  } catch (const PathRefused& e) {
    EXPECT_EQ(std::string(e.what()), "/etc/nfs.conf (under --root " + host.root.string() +
                                         ") is a symlink to nfs/missing.conf, which cannot be "
                                         "resolved inside the root (No such file or directory)");
  }
  EXPECT_TRUE(fs::is_symlink(host.root / "etc/nfs.conf"));
}

// In a --root staging tree an absolute link target is read inside the tree:
// a copied /etc/nfs.conf -> /etc/nfs/nfs.conf edits the tree's file, never
// the live host's; a link that climbs out of the tree is refused.
TEST(HostFiles, AbsoluteLinkIsFollowedInsideTheRoot) {
  StagedHost host;
  host.write("etc/nfs/nfs.conf", "[nfsd]\nthreads=8\n");
  fs::remove(host.root / "etc/nfs.conf");
  fs::create_symlink("/etc/nfs/nfs.conf", host.root / "etc/nfs.conf");
  writeHostFile(HostPaths(host.root), "/etc/nfs.conf", "[nfsd]\nthreads=16\n");
  EXPECT_EQ(host.read("etc/nfs/nfs.conf"), "[nfsd]\nthreads=16\n");
  EXPECT_TRUE(fs::is_symlink(host.root / "etc/nfs.conf"));
}

TEST(HostFiles, LinkLeavingTheRootIsRefused) {
  StagedHost host;
  StagedHost outside;  // another tree standing for the live host
  outside.write("victim.conf", "untouched\n");
  fs::remove(host.root / "etc/nfs.conf");
  const fs::path target = fs::relative(outside.root / "victim.conf", host.root / "etc");
  fs::create_symlink(target, host.root / "etc/nfs.conf");
  try {
    writeHostFile(HostPaths(host.root), "/etc/nfs.conf", "x\n");
    ADD_FAILURE() << "wrote through a link out of the root";
  } catch (const PathRefused& e) {
    EXPECT_EQ(std::string(e.what()), "/etc/nfs.conf (under --root " + host.root.string() +
                                         ") is a symlink to " + target.string() +
                                         ", which leads outside the root " + host.root.string());
  }
  EXPECT_EQ(outside.read("victim.conf"), "untouched\n");
}

// Backups named by the same second (two applies in a row) each keep their
// own bytes: none replaces another.
TEST(HostFiles, BackupsInOneSecondAreAllKept) {
  StagedHost host;
  const HostPaths paths(host.root);
  std::vector<fs::path> made;
  for (const char* version : {"threads=1\n", "threads=2\n", "threads=3\n"}) {
    host.write("etc/nfs.conf", version);
    auto b = backupHostFile(paths, "/etc/nfs.conf", "20261130T120000Z");
    ASSERT_TRUE(b.has_value());
    made.push_back(*b);
  }
  EXPECT_EQ(made[0], "/var/lib/nfsrdma/backups/nfs.conf.20261130T120000Z");
  EXPECT_EQ(made[1], "/var/lib/nfsrdma/backups/nfs.conf.20261130T120000Z.1");
  EXPECT_EQ(made[2], "/var/lib/nfsrdma/backups/nfs.conf.20261130T120000Z.2");
  EXPECT_EQ(host.read("var/lib/nfsrdma/backups/nfs.conf.20261130T120000Z"), "threads=1\n");
  EXPECT_EQ(host.read("var/lib/nfsrdma/backups/nfs.conf.20261130T120000Z.2"), "threads=3\n");
}

// A dangling symlink takes the name too: writing there would go elsewhere.
TEST(HostFiles, FirstUnusedPathSkipsFilesAndLinks) {
  StagedHost host;
  const HostPaths paths(host.root);
  EXPECT_EQ(firstUnusedHostPath(paths, "/var/rec"), "/var/rec");
  host.write("var/rec", "a");
  fs::create_symlink("nowhere", host.root / "var/rec.1");
  EXPECT_EQ(firstUnusedHostPath(paths, "/var/rec"), "/var/rec.2");
}

// Our own files are refused behind a linked directory even when the link
// stays inside the root: the tree must be what it looks like.
TEST(HostFiles, OwnFileBehindALinkedDirectoryIsRefused) {
  StagedHost host;
  host.mkdir("etc/elsewhere");
  fs::create_symlink("elsewhere", host.root / "etc/exports.d");
  try {
    writeHostFile(HostPaths(host.root), HostPaths::kOwnExports, "x\n");
    ADD_FAILURE() << "wrote through a linked directory";
  } catch (const PathRefused& e) {
    EXPECT_EQ(std::string(e.what()).rfind("/etc/exports.d (under --root " + host.root.string() +
                                              ") is a symlink (to elsewhere); expected a directory",
                                          0),
              0u)
        << e.what();
  }
  EXPECT_TRUE(fs::is_empty(host.root / "etc/elsewhere"));
}

// nfs.conf may be a link, but not reached through one.
TEST(HostFiles, NfsConfInALinkedDirectoryIsRefused) {
  StagedHost host;
  fs::rename(host.root / "etc", host.root / "real-etc");
  fs::create_symlink("real-etc", host.root / "etc");
  const std::string before = host.read("real-etc/nfs.conf");
  EXPECT_THROW(writeHostFile(HostPaths(host.root), HostPaths::kNfsConf, "x\n"), PathRefused);
  EXPECT_EQ(host.read("real-etc/nfs.conf"), before);
}

// A kernel value is never written through a linked /proc directory.
TEST(HostFiles, ProcValueBehindALinkedDirectoryIsRefused) {
  StagedHost host;
  fs::rename(host.root / "proc/fs/nfsd", host.root / "proc/fs/other");
  fs::create_symlink("other", host.root / "proc/fs/nfsd");
  EXPECT_THROW(writeProcValue(HostPaths(host.root), HostPaths::kThreads, "8\n", false),
               PathRefused);
  EXPECT_EQ(host.read("proc/fs/other/threads"), "0\n");
}

// sysfs is links all the way (/sys/class/net/eth0 -> ../../devices/...): a
// probe follows them, but with the root as "/", so an absolute link to a
// file outside the root reads the root's own path of that name, if any.
TEST(HostFiles, ProbesFollowLinksOnlyInsideTheRoot) {
  StagedHost host;
  StagedHost outside;
  outside.write("secret", "outside\n");
  host.write("sys/devices/virtual/net/lo/mtu", "65536\n");
  fs::create_symlink("../../devices/virtual/net/lo", host.root / "sys/class/net/lo");
  fs::create_symlink(outside.root, host.root / "sys/class/net/evil");
  fs::create_symlink("../../../../../../../../../.." + outside.root.string(),
                     host.root / "sys/class/net/climb");
  const HostPaths paths(host.root);
  EXPECT_EQ(readHostFile(paths, "/sys/class/net/lo/mtu"), "65536\n");
  EXPECT_EQ(readHostFile(paths, "/sys/class/net/evil/secret"), std::nullopt);
  EXPECT_EQ(readHostFile(paths, "/sys/class/net/climb/secret"), std::nullopt);
}

// procfs has no rename, so the temp file + rename of writeHostFile must
// never be used there: in a staged tree it would turn a kernel file into a
// regular one unnoticed.
TEST(HostFiles, WriteHostFileRefusesAProcPath) {
  StagedHost host;
  EXPECT_THROW(writeHostFile(HostPaths(host.root), HostPaths::kThreads, "8\n"), PathRefused);
  EXPECT_EQ(host.read("proc/fs/nfsd/threads"), "0\n");
}

// nfs.conf.d and the host's tools are looked at inside the root like every
// other path: a link to a directory or program outside it finds nothing.
TEST(HostFiles, NfsConfDirAndToolsAreSeenInsideTheRoot) {
  StagedHost host;
  StagedHost outside;
  outside.write("conf.d/50-site.conf", "[nfsd]\nthreads=1\n");
  fs::create_symlink(outside.root / "conf.d", host.root / "etc/nfs.conf.d");
  host.mkdir("usr/sbin");
  fs::create_symlink("/bin/sh", host.root / "usr/sbin/nfsdctl");  // the real /bin/sh, not ROOT's
  const HostPaths paths(host.root);
  const nfsrdma::server::EffectiveNfsConf conf(paths, std::nullopt);
  EXPECT_EQ(conf.warnings(), std::vector<std::string>{});
  EXPECT_FALSE(conf.get("nfsd", "threads").has_value());
  EXPECT_EQ(nfsrdma::server::findHostTool(paths, "nfsdctl"), "");
  EXPECT_EQ(nfsrdma::server::findHostTool(paths, "exportfs"), "/usr/sbin/exportfs");
}

}  // namespace
