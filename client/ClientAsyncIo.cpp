// READ and WRITE as the benchmarks drive them: submitted without waiting,
// answered on the transport's I/O thread, never sent again here (the
// caller owns the pacing). Vectored READs put several in one COMPOUND.
// The synchronous pread/pwrite (ClientSyncIo.cpp) are built on these.
#include <cstring>

#include "client/ClientInternal.h"

namespace nfsrdma {
namespace {

using namespace client_detail;  // ClientInternal.h

// Per extra READ in a vectored reply: opcode, status, eof, length and up to 3 pad bytes.
constexpr std::size_t kPerVectoredRead = 24;

// Ends reads [from, count) of a vectored READ with the same error.
void failReads(const Client::VectorCallback& done, std::size_t from, std::size_t count,
               const Error& e) {
  for (std::size_t i = from; i < count; ++i) done(i, IoResult{e, 0, false});
}

// A call for more than one READ or WRITE may carry: an error at once.
Error beyondIoSize(const std::string& what, std::size_t size, std::size_t maxIo) {
  if (size <= maxIo) return {};
  return makeError(ClientErrc::kInvalidArgument, what + ": " + std::to_string(size) +
                                                     " bytes exceed the " + std::to_string(maxIo) +
                                                     "-byte I/O size");
}

// READ data that came in line, copied into buf.
IoResult copyReadData(const nfs4::ReadResult& rr, std::span<std::uint8_t> buf,
                      const std::string& what) {
  IoResult r;
  if (rr.data.size() > buf.size()) {
    r.error = makeError(ClientErrc::kMalformedReply,
                        what + ": server returned " + std::to_string(rr.data.size()) +
                            " bytes for a " + std::to_string(buf.size()) + "-byte READ");
    return r;
  }
  if (!rr.data.empty()) std::memcpy(buf.data(), rr.data.data(), rr.data.size());
  r.bytes = rr.data.size();
  r.eof = rr.eof;
  return r;
}

// The result of a single READ into buf, its data placed there by the
// transport or in line in the reply.
IoResult readReply(const std::string& what, std::span<std::uint8_t> buf, const Error& err,
                   CompoundDecoder* d) {
  IoResult r;
  if (err) {
    r.error = ledBy(err, what);
    return r;
  }
  const std::uint32_t s1 = d->next(Op::kPutFh);
  const std::uint32_t s2 = s1 == nfs4::kNfs4Ok ? d->next(Op::kRead) : s1;
  if (!d->ok()) {
    r.error = malformedReply(*d, what);
    return r;
  }
  if (s2 != nfs4::kNfs4Ok) {
    r.error = makeError(nfs4::statusError(s2), what);
    return r;
  }
  const nfs4::ReadResult rr = d->read();
  if (!d->ok()) {
    r.error = malformedReply(*d, what);
  } else if (!rr.placed) {
    r = copyReadData(rr, buf, what);
  } else if (rr.placedLength > buf.size()) {
    r.error = makeError(ClientErrc::kMalformedReply,
                        what + ": server placed " + std::to_string(rr.placedLength) +
                            " bytes for a " + std::to_string(buf.size()) + "-byte READ");
  } else {
    r.bytes = rr.placedLength;
    r.eof = rr.eof;
  }
  return r;
}

}  // namespace

void ClientImpl::preadAsync(const OpenFile& file, std::span<std::uint8_t> buf, std::uint64_t offset,
                            IoCallback done) {
  if (Error e = beyondIoSize("read " + file.path(), buf.size(), maxIo_)) {
    done(IoResult{e, 0, false});
    return;
  }
  auto st = file.state_;
  // One READ per COMPOUND: its data may land straight in 'buf' (RDMA Write chunk).
  rpc::CallHints hints;
  hints.directReplies[0] = buf;
  hints.directCount = 1;
  hints.maxReplySize = kIoOverhead;
  session_->submit(
      [st, offset, count = static_cast<std::uint32_t>(buf.size())](CompoundEncoder& c) {
        c.putFh(st->fh);
        c.read(st->stateId, offset, count);
      },
      [st, buf, done = std::move(done)](const Error& err, CompoundDecoder* d) {
        done(readReply("read " + st->path, buf, err, d));
      },
      hints);
}

std::size_t ClientImpl::maxReadsPerCompound(std::size_t blockSize) const {
  switch (options_.proto) {
    case TransportKind::kRdma:
      return 1;  // one READ (one Write chunk) per COMPOUND there
    case TransportKind::kTcp:
      break;
  }
  const auto& fore = session_->fore();
  const std::size_t room =
      fore.maxResponseSize > kIoOverhead ? fore.maxResponseSize - kIoOverhead : 0;
  // The server's ca_maxoperations counts SEQUENCE and PUTFH too.
  const std::size_t ops = fore.maxOperations > 2 ? fore.maxOperations - 2 : 1;
  return std::clamp<std::size_t>(std::min(room / (blockSize + kPerVectoredRead), ops), 1,
                                 kMaxReadsPerCompound);
}

void ClientImpl::preadvAsync(const OpenFile& file, std::span<const ReadVector> reads,
                             VectorCallback done) {
  if (reads.empty()) return;
  if (reads.size() == 1) {
    preadAsync(file, reads[0].buf, reads[0].offset,
               [done = std::move(done)](const IoResult& r) { done(0, r); });
    return;
  }
  if (options_.proto == TransportKind::kRdma) {
    failReads(done, 0, reads.size(),
              makeError(ClientErrc::kInvalidArgument,
                        "read " + file.path() +
                            ": vectored READs need proto=tcp (over RDMA each READ's data is "
                            "placed by its own Write chunk, one READ per COMPOUND)"));
    return;
  }
  std::size_t largest = 0;
  for (const ReadVector& r : reads) largest = std::max(largest, r.buf.size());
  if (reads.size() > maxReadsPerCompound(largest) || largest > maxIo_) {
    failReads(
        done, 0, reads.size(),
        makeError(ClientErrc::kInvalidArgument,
                  "read " + file.path() + ": " + std::to_string(reads.size()) + " reads of up to " +
                      std::to_string(largest) + " bytes do not fit one COMPOUND (at most " +
                      std::to_string(maxReadsPerCompound(largest)) + ")"));
    return;
  }
  auto st = file.state_;
  // The reply holds every READ's data in line (no direct placement), so the
  // transport is told how large it may be (RDMA sizes its Reply chunk by it).
  rpc::CallHints hints;
  hints.maxReplySize = kIoOverhead + reads.size() * (largest + kPerVectoredRead);
  auto vec = std::make_shared<std::vector<ReadVector>>(reads.begin(), reads.end());
  session_->submit(
      [st, vec](CompoundEncoder& c) {
        c.putFh(st->fh);
        for (const ReadVector& r : *vec) {
          c.read(st->stateId, r.offset, static_cast<std::uint32_t>(r.buf.size()));
        }
      },
      [this, file, vec, done = std::move(done)](const Error& err, CompoundDecoder* d) {
        vectoredReadReply(file, *vec, done, err, d);
      },
      hints);
}

void ClientImpl::vectoredReadReply(const OpenFile& file, const std::vector<ReadVector>& reads,
                                   const VectorCallback& done, const Error& err,
                                   CompoundDecoder* d) {
  const std::string what = "read " + file.path();
  if (err) {
    failReads(done, 0, reads.size(), ledBy(err, what));
    return;
  }
  std::uint32_t status = d->next(Op::kPutFh);
  if (d->ok() && status != nfs4::kNfs4Ok) {  // no READ ran; they would all fail the same way
    failReads(done, 0, reads.size(), makeError(nfs4::statusError(status), what));
    return;
  }
  std::size_t i = 0;
  for (; i < reads.size(); ++i) {
    status = d->next(Op::kRead);
    if (!d->ok() || status != nfs4::kNfs4Ok) break;
    const nfs4::ReadResult rr = d->read();
    if (!d->ok()) break;
    done(i, copyReadData(rr, reads[i].buf, what));
  }
  if (i >= reads.size()) return;
  if (!d->ok()) {
    failReads(done, i, reads.size(), malformedReply(*d, what));
    return;
  }
  // The READ at i failed: it gets its status; the ones after it never
  // ran and go again on their own.
  if (status != nfs4::kNfs4Ok) {
    done(i, IoResult{makeError(nfs4::statusError(status), what), 0, false});
    ++i;
  }
  if (i >= reads.size()) return;
  const std::size_t first = i;
  std::vector<ReadVector> rest(reads.begin() + static_cast<std::ptrdiff_t>(first), reads.end());
  preadvAsync(file, rest, [done, first](std::size_t j, const IoResult& r) { done(first + j, r); });
}

void ClientImpl::pwriteAsync(const OpenFile& file, std::span<const std::uint8_t> data,
                             std::uint64_t offset, StableHow stable, IoCallback done) {
  writeAsync(file.state_, data, offset, stable, nullptr, std::move(done));
}

void ClientImpl::writeAsync(const std::shared_ptr<OpenFile::State>& st,
                            std::span<const std::uint8_t> data, std::uint64_t offset,
                            StableHow stable, KeptCopy keep, IoCallback done) {
  if (Error e = beyondIoSize("write " + st->path, data.size(), maxIo_)) {
    done(IoResult{e, 0, false});
    return;
  }
  session_->submit(
      [st, data, offset, stable](CompoundEncoder& c) {
        c.putFh(st->fh);
        c.write(st->stateId, offset, stable, data);
      },
      [st, offset, keep = std::move(keep), requested = data.size(), done = std::move(done)](
          const Error& err, CompoundDecoder* d) {
        const std::string what = "write " + st->path;
        IoResult r;
        if (err) {
          r.error = ledBy(err, what);
          done(r);
          return;
        }
        const std::uint32_t s1 = d->next(Op::kPutFh);
        const std::uint32_t s2 = s1 == nfs4::kNfs4Ok ? d->next(Op::kWrite) : s1;
        if (!d->ok()) {
          r.error = malformedReply(*d, what);
        } else if (s2 != nfs4::kNfs4Ok) {
          r.error = makeError(nfs4::statusError(s2), what);
        } else {
          const nfs4::WriteResult wr = d->write();
          if (!d->ok()) {
            r.error = malformedReply(*d, what);
          } else if (wr.count > requested) {
            r.error = makeError(ClientErrc::kMalformedReply,
                                what + ": server claims " + std::to_string(wr.count) +
                                    " bytes of a " + std::to_string(requested) + "-byte WRITE");
          } else {
            r.bytes = wr.count;
            if (wr.committed == StableHow::kUnstable) {
              std::lock_guard lock(st->mu);
              st->unstable.onWriteReply(wr.verifier);
              if (keep) {
                // Under the same lock as the reply's count: a COMMIT either
                // covers both or neither.
                keep->resize(wr.count);
                st->retainedBytes += wr.count;
                st->retained.push_back({offset, std::move(*keep), st->unstable.replies()});
              } else {
                st->unretained = true;
              }
            }
          }
        }
        done(r);
      });
}

}  // namespace nfsrdma
