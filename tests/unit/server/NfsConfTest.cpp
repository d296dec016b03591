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

TEST(NfsConf, AddsTheSectionWhenAbsentAndKeepsAMissingFinalNewline) {
  NfsConf c("[general]\nx=1");
  EXPECT_TRUE(c.set("nfsd", "threads", "16"));
  EXPECT_EQ(c.text(), "[general]\nx=1\n\n[nfsd]\nthreads=16\n");
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
