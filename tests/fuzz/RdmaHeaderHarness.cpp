#include "tests/fuzz/RdmaHeaderHarness.h"

#include <vector>

#include "client/transport/rdma/RpcRdmaHeader.h"

namespace nfsrdma::fuzz {

bool runRdmaHeader(std::span<const std::uint8_t> input) {
  using namespace nfsrdma::transport::rdma;
  RpcRdmaHeader h;
  std::size_t consumed = 0;
  if (decodeHeader(input, h, consumed)) return true;  // rejected: fine, as long as nothing crashed
  if (consumed > input.size()) return false;
  std::vector<std::uint8_t> buf(consumed + 64);
  xdr::XdrEncoder enc(buf);
  encodeHeader(enc, h);
  if (enc.overflowed() || enc.headSize() != consumed) return false;
  RpcRdmaHeader again;
  std::size_t consumedAgain = 0;
  if (decodeHeader(enc.head(), again, consumedAgain)) return false;
  return consumedAgain == consumed && again.xid == h.xid && again.credits == h.credits &&
         again.proc == h.proc && again.reads == h.reads && again.writes == h.writes &&
         again.hasReply == h.hasReply && again.reply == h.reply;
}

}  // namespace nfsrdma::fuzz
