// Errors of the client library, shared by every layer (users include it as
// client/Error.h).
//
// Hot paths (encode, send, dispatch) pass an Error by value instead of
// throwing: a std::error_code (errno, our ClientErrc, or an NFS4ERR_ status
// from nfs4/Nfs4Status.h) plus a context string naming what failed. The
// synchronous API turns them into NfsException at its edge.
#pragma once

#include <stdexcept>
#include <string>
#include <system_error>

namespace nfsrdma {

enum class ClientErrc {
  kTimedOut = 1,       // no reply within the call timeout
  kConnectionClosed,   // the peer closed or reset the connection
  kMalformedReply,     // a reply that does not decode (truncated, bad XDR, bad values)
  kRecordTooLarge,     // record-marking fragment beyond the negotiated maximum
  kRpcDenied,          // MSG_DENIED: RPC version mismatch or authentication error
  kRpcAcceptError,     // MSG_ACCEPTED but not SUCCESS (PROG_UNAVAIL, GARBAGE_ARGS, ...)
  kEncodeOverflow,     // a call does not fit the negotiated request size
  kSequenceMismatch,   // SEQUENCE reply for another session, slot or sequence id
  kShutdown,           // the client is closing; the call was not sent
  kInvalidArgument,    // bad URL, path or option given by the caller
  kNoRdmaDevice,       // the RDMA transport has no device to use
  kRdmaChunkError,     // RDMA_ERROR ERR_CHUNK: the server may have executed the call
  kConnectionLost,     // the call's connection failed: the server may or may not have run it
  kServerUnreachable,  // no connection to the server within the recovery timeout
  kUnstableDataLost,   // a COMMIT found a new write verifier: data the caller wrote may be gone
  kNotSameServer,      // a trunk address answered EXCHANGE_ID as another server (owner or scope)
};

const std::error_category& clientCategory();
std::error_code make_error_code(ClientErrc e);

struct Error {
  std::error_code code;
  std::string context;  // what was being done, e.g. "open /export/x"

  explicit operator bool() const { return static_cast<bool>(code); }
  // "<context>: <code message>", e.g. "open /export/x: NFS4ERR_NOENT (no such file or directory)"
  std::string message() const;
};

Error makeError(std::error_code code, std::string context);
Error errnoError(int err, std::string context);

class NfsException : public std::runtime_error {
 public:
  explicit NfsException(const Error& e) : std::runtime_error(e.message()), code_(e.code) {}
  const std::error_code& code() const noexcept { return code_; }

 private:
  std::error_code code_;
};

}  // namespace nfsrdma

template <>
struct std::is_error_code_enum<nfsrdma::ClientErrc> : std::true_type {};
