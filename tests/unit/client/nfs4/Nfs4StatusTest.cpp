// NFSv4 status names and texts, as the CLI prints them
// ("nfsrdma-client: open /export/x: NFS4ERR_NOENT (no such file or directory)").
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "client/Error.h"
#include "client/nfs4/Nfs4Status.h"

namespace nfsrdma::nfs4 {
namespace {

TEST(Nfs4Status, NoEntNameTextAndMessage) {
  EXPECT_EQ(statusName(kErrNoEnt), "NFS4ERR_NOENT");
  EXPECT_EQ(statusText(kErrNoEnt), "no such file or directory");
  EXPECT_EQ(statusError(kErrNoEnt).message(), "NFS4ERR_NOENT (no such file or directory)");
  EXPECT_STREQ(statusError(kErrNoEnt).category().name(), "nfs4");
  EXPECT_EQ(makeError(statusError(kErrNoEnt), "open /export/x").message(),
            "open /export/x: NFS4ERR_NOENT (no such file or directory)");
}

TEST(Nfs4Status, NamedConstantsMatchTheirNames) {
  const std::pair<std::uint32_t, const char*> cases[] = {
      {kNfs4Ok, "NFS4_OK"},
      {kErrPerm, "NFS4ERR_PERM"},
      {kErrIo, "NFS4ERR_IO"},
      {kErrAccess, "NFS4ERR_ACCESS"},
      {kErrExist, "NFS4ERR_EXIST"},
      {kErrNotDir, "NFS4ERR_NOTDIR"},
      {kErrIsDir, "NFS4ERR_ISDIR"},
      {kErrInval, "NFS4ERR_INVAL"},
      {kErrRofs, "NFS4ERR_ROFS"},
      {kErrNotEmpty, "NFS4ERR_NOTEMPTY"},
      {kErrDelay, "NFS4ERR_DELAY"},
      {kErrGrace, "NFS4ERR_GRACE"},
      {kErrBadSession, "NFS4ERR_BADSESSION"},
      {kErrSeqMisordered, "NFS4ERR_SEQ_MISORDERED"},
  };
  for (const auto& [code, name] : cases) EXPECT_EQ(statusName(code), name) << code;
}

// Numbers from RFC 8881 section 15.1, spot-checked across the ranges.
TEST(Nfs4Status, RfcNumbers) {
  EXPECT_EQ(statusError(13).message(), "NFS4ERR_ACCESS (permission denied)");
  EXPECT_EQ(statusError(30).message(), "NFS4ERR_ROFS (read-only file system)");
  EXPECT_EQ(statusName(63), "NFS4ERR_NAMETOOLONG");
  EXPECT_EQ(statusName(70), "NFS4ERR_STALE");
  EXPECT_EQ(statusName(10001), "NFS4ERR_BADHANDLE");
  EXPECT_EQ(statusName(10036), "NFS4ERR_BADXDR");
  EXPECT_EQ(statusName(10044), "NFS4ERR_OP_ILLEGAL");
  EXPECT_EQ(statusName(10071), "NFS4ERR_OP_NOT_IN_SESSION");
  EXPECT_EQ(statusName(10078), "NFS4ERR_DEADSESSION");
  EXPECT_EQ(statusName(10087), "NFS4ERR_DELEG_REVOKED");
  EXPECT_EQ(statusError(kNfs4Ok).message(), "NFS4_OK (success)");
}

TEST(Nfs4Status, UnknownCodes) {
  EXPECT_EQ(statusName(12345), "NFS4ERR_(unknown 12345)");
  // Two unknown names held at once stay apart (they once shared a buffer).
  const std::string first = statusName(12345);
  const std::string second = statusName(54321);
  EXPECT_EQ(first, "NFS4ERR_(unknown 12345)");
  EXPECT_EQ(second, "NFS4ERR_(unknown 54321)");
  EXPECT_EQ(statusText(12345), "status not defined by RFC 8881");
  EXPECT_EQ(statusError(10002).message(),
            "NFS4ERR_(unknown 10002) (status not defined by RFC 8881)");
  EXPECT_EQ(statusName(0xffffffffU), "NFS4ERR_(unknown 4294967295)");
  // An error_code carries an int: the largest status survives the round trip.
  EXPECT_EQ(statusError(0xffffffffU).message(),
            "NFS4ERR_(unknown 4294967295) (status not defined by RFC 8881)");
}

}  // namespace
}  // namespace nfsrdma::nfs4
