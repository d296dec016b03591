// NFSv4.1 protocol numbers (RFC 8881, XDR in RFC 5662) used by the client.
#pragma once

#include <cstdint>

namespace nfsrdma::nfs4 {

inline constexpr std::uint32_t kNfsProgram = 100003;
inline constexpr std::uint32_t kNfsVersion = 4;
inline constexpr std::uint32_t kProcNull = 0;
inline constexpr std::uint32_t kProcCompound = 1;
inline constexpr std::uint32_t kMinorVersion = 1;

inline constexpr std::size_t kFhMaxSize = 128;
inline constexpr std::size_t kSessionIdSize = 16;
inline constexpr std::size_t kVerifierSize = 8;
inline constexpr std::size_t kStateIdOtherSize = 12;
inline constexpr std::size_t kOpaqueLimit = 1024;

enum class Op : std::uint32_t {
  kAccess = 3,
  kClose = 4,
  kCommit = 5,
  kCreate = 6,
  kDelegReturn = 8,
  kGetAttr = 9,
  kGetFh = 10,
  kLookup = 15,
  kOpen = 18,
  kPutFh = 22,
  kPutRootFh = 24,
  kRead = 25,
  kReadDir = 26,
  kReadLink = 27,
  kRemove = 28,
  kRename = 29,
  kRestoreFh = 31,
  kSaveFh = 32,
  kSetAttr = 34,
  kWrite = 38,
  kBindConnToSession = 41,
  kExchangeId = 42,
  kCreateSession = 43,
  kDestroySession = 44,
  kSequence = 53,
  kDestroyClientId = 57,
  kReclaimComplete = 58,
  kIllegal = 10044,
};

// File attribute numbers (RFC 8881 section 5).
namespace attr {
inline constexpr std::uint32_t kSupportedAttrs = 0;
inline constexpr std::uint32_t kType = 1;
inline constexpr std::uint32_t kChange = 3;
inline constexpr std::uint32_t kSize = 4;
inline constexpr std::uint32_t kFsid = 8;
inline constexpr std::uint32_t kLeaseTime = 10;
inline constexpr std::uint32_t kFileId = 20;
inline constexpr std::uint32_t kMaxRead = 30;
inline constexpr std::uint32_t kMaxWrite = 31;
inline constexpr std::uint32_t kMode = 33;
inline constexpr std::uint32_t kNumLinks = 35;
inline constexpr std::uint32_t kOwner = 36;
inline constexpr std::uint32_t kOwnerGroup = 37;
inline constexpr std::uint32_t kSpaceUsed = 45;
inline constexpr std::uint32_t kTimeAccess = 47;
inline constexpr std::uint32_t kTimeMetadata = 52;
inline constexpr std::uint32_t kTimeModify = 53;
}  // namespace attr

enum class FileType : std::uint32_t {
  kNone = 0,
  kRegular = 1,
  kDirectory = 2,
  kBlock = 3,
  kChar = 4,
  kSymlink = 5,
  kSocket = 6,
  kFifo = 7,
  kAttrDir = 8,
  kNamedAttr = 9,
};

enum class StableHow : std::uint32_t { kUnstable = 0, kDataSync = 1, kFileSync = 2 };

inline constexpr std::uint32_t kShareAccessRead = 1;
inline constexpr std::uint32_t kShareAccessWrite = 2;
inline constexpr std::uint32_t kShareAccessBoth = 3;
inline constexpr std::uint32_t kShareAccessWantNoDeleg = 0x0400;
inline constexpr std::uint32_t kOpenNoCreate = 0;
inline constexpr std::uint32_t kOpenCreate = 1;
inline constexpr std::uint32_t kCreateUnchecked = 0;
inline constexpr std::uint32_t kClaimNull = 0;
inline constexpr std::uint32_t kClaimPrevious = 1;
inline constexpr std::uint32_t kClaimFh = 4;
// channel_dir_from_client4 of BIND_CONN_TO_SESSION (RFC 8881 18.34)
inline constexpr std::uint32_t kCdfc4Fore = 1;

inline constexpr std::uint32_t kOpenDelegateNone = 0;
inline constexpr std::uint32_t kOpenDelegateRead = 1;
inline constexpr std::uint32_t kOpenDelegateWrite = 2;
inline constexpr std::uint32_t kOpenDelegateNoneExt = 3;

inline constexpr std::uint32_t kExchgIdFlagUseNonPnfs = 0x00010000;
inline constexpr std::uint32_t kSp4None = 0;

}  // namespace nfsrdma::nfs4
