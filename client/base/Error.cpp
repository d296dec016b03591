#include "client/base/Error.h"

namespace nfsrdma {
namespace {

class ClientCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "nfsrdma"; }
  std::string message(int ev) const override {
    switch (static_cast<ClientErrc>(ev)) {
      case ClientErrc::kTimedOut:
        return "timed out waiting for the server's reply";
      case ClientErrc::kConnectionClosed:
        return "connection closed by the server";
      case ClientErrc::kMalformedReply:
        return "malformed reply from the server";
      case ClientErrc::kRecordTooLarge:
        return "record larger than the negotiated maximum";
      case ClientErrc::kRpcDenied:
        return "RPC call denied by the server";
      case ClientErrc::kRpcAcceptError:
        return "RPC call not executed by the server";
      case ClientErrc::kEncodeOverflow:
        return "request larger than the negotiated maximum";
      case ClientErrc::kSequenceMismatch:
        return "SEQUENCE reply does not match the request";
      case ClientErrc::kShutdown:
        return "client is shutting down";
      case ClientErrc::kInvalidArgument:
        return "invalid argument";
      case ClientErrc::kNoRdmaDevice:
        return "no RDMA device";
      case ClientErrc::kRdmaChunkError:
        return "the server could not use the call's chunks (it may have executed the call)";
      case ClientErrc::kConnectionLost:
        return "connection to the server lost";
      case ClientErrc::kServerUnreachable:
        return "server unreachable";
      case ClientErrc::kUnstableDataLost:
        return "unstable data written asynchronously may be lost and must be written again";
      case ClientErrc::kNotSameServer:
        return "not the same server (no session trunking)";
    }
    return "unknown nfsrdma error " + std::to_string(ev);
  }
};

}  // namespace

const std::error_category& clientCategory() {
  static const ClientCategory category;
  return category;
}

std::error_code make_error_code(ClientErrc e) {
  return {static_cast<int>(e), clientCategory()};
}

std::string Error::message() const {
  if (context.empty()) return code.message();
  // These two are raised with a context that already says what was wrong
  // and what was expected: "invalid argument" after it only repeats it.
  if (code == make_error_code(ClientErrc::kInvalidArgument) ||
      code == make_error_code(ClientErrc::kNoRdmaDevice)) {
    return context;
  }
  return context + ": " + code.message();
}

Error makeError(std::error_code code, std::string context) {
  return Error{code, std::move(context)};
}

Error errnoError(int err, std::string context) {
  return Error{std::error_code(err, std::generic_category()), std::move(context)};
}

}  // namespace nfsrdma
