// The inline part of an RPC-over-RDMA call: what travels in the SEND after
// the transport header. Pure, so the bytes are unit-tested without verbs.
//
// A payload that moves to a Read chunk leaves the inline stream, and so does
// the XDR pad that follows it: RFC 8166 has the sender omit the roundup of
// a data item it moves to a Read chunk (the kernel's xprtrdma skips the pad
// in the call's tail the same way).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "client/xdr/XdrEncoder.h"

namespace nfsrdma::transport::rdma {

// Appends the call's segments to out[at..], skipping those that are (as
// data and size) one of `chunked` and the first pad bytes of the segment
// after each. Returns the new end, or nothing if out cannot hold them.
std::optional<std::size_t> marshalInline(std::span<const xdr::ConstBuffer> segments,
                                         std::span<const xdr::BulkSegment> chunked,
                                         std::span<std::uint8_t> out, std::size_t at);

}  // namespace nfsrdma::transport::rdma
