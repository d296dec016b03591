// NFSv4 status codes as a std::error_category, so an NFS4ERR_ travels as a
// std::error_code and prints as "NFS4ERR_NOENT (no such file or directory)".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

namespace nfsrdma::nfs4 {

inline constexpr std::uint32_t kNfs4Ok = 0;
inline constexpr std::uint32_t kErrPerm = 1;
inline constexpr std::uint32_t kErrNoEnt = 2;
inline constexpr std::uint32_t kErrIo = 5;
inline constexpr std::uint32_t kErrAccess = 13;
inline constexpr std::uint32_t kErrExist = 17;
inline constexpr std::uint32_t kErrNotDir = 20;
inline constexpr std::uint32_t kErrIsDir = 21;
inline constexpr std::uint32_t kErrInval = 22;
inline constexpr std::uint32_t kErrRofs = 30;
inline constexpr std::uint32_t kErrNotEmpty = 66;
inline constexpr std::uint32_t kErrServerFault = 10006;
inline constexpr std::uint32_t kErrDelay = 10008;
inline constexpr std::uint32_t kErrExpired = 10011;
inline constexpr std::uint32_t kErrGrace = 10013;
inline constexpr std::uint32_t kErrStaleClientId = 10022;
inline constexpr std::uint32_t kErrSymlink = 10029;
inline constexpr std::uint32_t kErrBadSession = 10052;
inline constexpr std::uint32_t kErrBadSlot = 10053;
inline constexpr std::uint32_t kErrCompleteAlready = 10054;
inline constexpr std::uint32_t kErrSeqMisordered = 10063;
inline constexpr std::uint32_t kErrClientIdBusy = 10074;
inline constexpr std::uint32_t kErrDeadSession = 10078;
inline constexpr std::uint32_t kErrNoGrace = 10033;
inline constexpr std::uint32_t kErrReclaimBad = 10034;
inline constexpr std::uint32_t kErrRetryUncachedRep = 10068;
inline constexpr std::uint32_t kErrConnNotBoundToSession = 10055;

// "NFS4ERR_NOENT", or "NFS4ERR_(unknown 12345)". A string, not a view: an
// unknown code's name is built, and two of them must be able to coexist.
std::string statusName(std::uint32_t status);
// The errno-like explanation, e.g. "no such file or directory".
std::string_view statusText(std::uint32_t status);

const std::error_category& nfs4Category();
inline std::error_code statusError(std::uint32_t status) {
  return {static_cast<int>(status), nfs4Category()};
}

}  // namespace nfsrdma::nfs4
