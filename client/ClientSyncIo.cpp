// The synchronous calls' waiting: one COMPOUND sent again while the server
// answers NFS4ERR_DELAY or NFS4ERR_GRACE (run), and pread/pwrite of any
// size as chunks of the I/O size in flight at once, each ridden through a
// busy server and continued when short. pread and pwrite share one loop so
// that reads and writes retry, continue and fail by the same rules.
#include <condition_variable>
#include <mutex>
#include <thread>

#include "client/ClientInternal.h"
#include "client/nfs4/BusyRetry.h"

namespace nfsrdma {
namespace {

using namespace client_detail;  // ClientInternal.h

// Waits for a number of asynchronous completions and keeps the first error.
class CompletionGroup {
 public:
  void add() {
    std::lock_guard lock(mu_);
    ++outstanding_;
  }
  void done(const Error& e) {
    std::lock_guard lock(mu_);
    if (e && !first_) first_ = e;
    if (--outstanding_ == 0) cv_.notify_all();
  }
  Error wait() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return outstanding_ == 0; });
    return first_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::size_t outstanding_ = 0;
  Error first_;
};

// Submits one asynchronous call and waits for its result (every call ends
// within the RPC timeout, so the wait is bounded).
template <typename Submit>
IoResult waitFor(Submit&& submit) {
  IoResult result;
  CompletionGroup group;
  group.add();
  submit([&result, &group](const IoResult& r) {
    result = r;
    group.done(r.error);
  });
  group.wait();
  return result;
}

// The waiting between sends of one operation that the server answered
// NFS4ERR_DELAY or NFS4ERR_GRACE (nfs4/BusyRetry.h): one budget and one
// notice per operation, however many requests it sends again.
class BusyWait {
 public:
  explicit BusyWait(const ClientOptions& o) : o_(o) {}
  // Pauses and returns true when the request that got e may go again;
  // false once the budget is spent (e then says how often it was sent).
  bool pauseBeforeResend(Error& e) {
    if (o_.busyTimeout.count() == 0) return false;
    const auto now = nfs4::BusyRetry::Clock::now();
    if (!retry_) {
      retry_.emplace(o_.busyTimeout, now);
      if (o_.onBusy) {
        o_.onBusy(e.message() + "; sending it again for up to " +
                  std::to_string(o_.busyTimeout.count()) + " ms (busy-timeout)");
      }
    }
    const std::optional<std::chrono::milliseconds> pause = retry_->nextPause(now);
    if (!pause) {
      e.context += ", sent " + std::to_string(retry_->retries() + 1) +
                   " times within busy-timeout=" + std::to_string(o_.busyTimeout.count()) + " ms";
      return false;
    }
    std::this_thread::sleep_for(*pause);
    return true;
  }

 private:
  const ClientOptions& o_;
  std::optional<nfs4::BusyRetry> retry_;
};

// An asynchronous READ or WRITE sent again while the server answers DELAY
// or GRACE; both are idempotent (the same bytes to the same place).
template <typename Submit>
IoResult resendWhileBusy(IoResult r, BusyWait& wait, Submit&& submit) {
  while (nfs4::BusyRetry::busy(r.error) && wait.pauseBeforeResend(r.error)) r = waitFor(submit);
  return r;
}

}  // namespace

bool isBusy(const std::error_code& code) {
  return nfs4::BusyRetry::busy(Error{code, {}});
}
static_assert(kFirstBusyPause == nfs4::BusyRetry::kFirstPause,
              "Client.h says the client's first pause");

Error ClientImpl::run(const std::string& what, const nfs4::Session::Encode& encode,
                      const std::function<Error(CompoundDecoder&)>& decode,
                      const rpc::CallHints& hints) {
  if (onIoThread()) {
    return makeError(ClientErrc::kInvalidArgument,
                     what + ": synchronous NFS call from an I/O callback (it would deadlock)");
  }
  BusyWait wait(options_);
  for (;;) {
    std::uint32_t firstNonIdempotent = CompoundEncoder::kAllIdempotent;
    bool decoded = false;
    std::uint32_t status = nfs4::kNfs4Ok;
    std::uint32_t results = 0;
    Error e = session_->roundTrip(
        [&](CompoundEncoder& c) {
          encode(c);
          firstNonIdempotent = c.firstNonIdempotentOp();
        },
        [&](CompoundDecoder& d) {
          decoded = true;
          status = d.status();
          results = d.resultCount();
          return decode(d);
        },
        hints);
    if (e && !decoded) e = ledBy(e, what);
    if (!nfs4::BusyRetry::resendable(e, decoded, status, results, firstNonIdempotent) ||
        !wait.pauseBeforeResend(e)) {
      return e;
    }
  }
}

std::size_t ClientImpl::syncIo(const char* call, std::size_t size, const SubmitPart& submit,
                               const NoProgress& noProgress) {
  if (onIoThread()) {
    check(makeError(ClientErrc::kInvalidArgument,
                    std::string("synchronous ") + call + " from an I/O callback"));
  }
  // The call for chunk bytes [at, end) of the buffer.
  const auto part = [&submit](std::size_t at, std::size_t end) {
    return [&submit, at, end](IoCallback cb) { submit(at, end - at, std::move(cb)); };
  };
  const auto chunkEnd = [&](std::size_t i) { return std::min(size, (i + 1) * maxIo_); };
  // All chunks at once: the session keeps as many in flight as it has slots.
  const std::size_t chunks = (size + maxIo_ - 1) / maxIo_;
  std::vector<IoResult> results(chunks);
  CompletionGroup group;
  for (std::size_t i = 0; i < chunks; ++i) {
    group.add();
    part(i * maxIo_, chunkEnd(i))([&results, &group, i](const IoResult& r) {
      results[i] = r;
      group.done(r.error);
    });
  }
  (void)group.wait();  // each chunk's own result is looked at below
  BusyWait busy(options_);
  std::size_t done = 0;
  for (std::size_t i = 0; i < chunks; ++i) {
    const std::size_t end = chunkEnd(i);
    IoResult r = resendWhileBusy(results[i], busy, part(done, end));
    // The rest of a short chunk one call at a time, up to end of file.
    // Each must make progress: a server that keeps answering 0 bytes ends
    // in an error, not in a loop.
    for (;;) {
      check(r.error);
      done += r.bytes;
      if (done == end || r.eof) break;
      if (r.bytes == 0) check(noProgress(done, end - done));
      auto more = part(done, end);
      r = resendWhileBusy(waitFor(more), busy, more);
    }
    if (done < end) break;
  }
  return done;
}

std::size_t ClientImpl::pread(const OpenFile& file, std::span<std::uint8_t> buf,
                              std::uint64_t offset) {
  return syncIo(
      "pread", buf.size(),
      [&](std::size_t at, std::size_t len, IoCallback done) {
        preadAsync(file, buf.subspan(at, len), offset + at, std::move(done));
      },
      [&](std::size_t at, std::size_t) {
        return makeError(std::make_error_code(std::errc::io_error),
                         "read " + file.path() + ": server returned 0 bytes at offset " +
                             std::to_string(offset + at) + " without end of file");
      });
}

void ClientImpl::pwrite(const OpenFile& file, std::span<const std::uint8_t> data,
                        std::uint64_t offset, StableHow stable) {
  const auto& st = file.state_;
  // Data too large to keep a copy of goes durable at once.
  if (stable == StableHow::kUnstable && data.size() > kRetainedLimit) stable = StableHow::kFileSync;
  const bool keep = stable == StableHow::kUnstable;
  if (keep) {
    bool full = false;
    {
      std::lock_guard lock(st->mu);
      full = st->retainedBytes + data.size() > kRetainedLimit;
    }
    // As the kernel's writeback does: COMMIT what is kept before keeping more.
    if (full) commitAndCheck(st, "write " + file.path());
  }
  writeAll(st, data, offset, stable, keep);
}

void ClientImpl::writeAll(const std::shared_ptr<OpenFile::State>& st,
                          std::span<const std::uint8_t> data, std::uint64_t offset,
                          StableHow stable, bool keep) {
  (void)syncIo(
      "pwrite", data.size(),
      [&](std::size_t at, std::size_t len, IoCallback done) {
        const auto part = data.subspan(at, len);
        KeptCopy copy =
            keep ? std::make_shared<std::vector<std::uint8_t>>(part.begin(), part.end()) : nullptr;
        writeAsync(st, part, offset + at, stable, std::move(copy), std::move(done));
      },
      [&](std::size_t at, std::size_t left) {
        return makeError(std::make_error_code(std::errc::io_error),
                         "write " + st->path + ": server wrote 0 of " + std::to_string(left) +
                             " bytes at offset " + std::to_string(offset + at));
      });
}

void ClientImpl::fsync(const OpenFile& file) {
  commitAndCheck(file.state_, "fsync " + file.path());
}

void ClientImpl::commitAndCheck(const std::shared_ptr<OpenFile::State>& st,
                                const std::string& what) {
  nfs4::UnstableWrites::CommitTicket ticket;
  {
    std::lock_guard lock(st->mu);
    ticket = st->unstable.beginCommit();
  }
  nfs4::Verifier committed{};
  check(run(
      what,
      [&](CompoundEncoder& c) {
        c.putFh(st->fh);
        c.commit(0, 0);
      },
      [&](CompoundDecoder& d) -> Error {
        if (Error e = expectOk(d, Op::kPutFh, what)) return e;
        if (Error e = expectOk(d, Op::kCommit, what)) return e;
        committed = d.commit();
        if (!d.ok()) return malformedReply(d, what);
        return {};
      }));
  std::vector<OpenFile::State::Retained> lost;
  {
    std::lock_guard lock(st->mu);
    if (st->unstable.endCommit(ticket, committed) ==
        nfs4::UnstableWrites::CommitOutcome::kDurable) {
      // The copies of what this COMMIT covered (replies counted before it
      // went out) are no longer needed; another fsync may have dropped them.
      std::erase_if(st->retained, [&](const OpenFile::State::Retained& r) {
        if (r.reply > ticket.replies) return false;
        st->retainedBytes -= r.data.size();
        return true;
      });
      if (!st->unstable.owed()) st->unretained = false;
      return;
    }
    if (st->unretained) {
      st->unretained = false;
      throw NfsException(makeError(ClientErrc::kUnstableDataLost,
                                   what +
                                       ": the server restarted since the data was written (write "
                                       "verifier changed)"));
    }
    lost.swap(st->retained);
    st->retainedBytes = 0;
  }
  rewriteRetained(st, lost);
}

void ClientImpl::rewriteRetained(const std::shared_ptr<OpenFile::State>& st,
                                 const std::vector<OpenFile::State::Retained>& lost) {
  // FILE_SYNC: durable when answered, so nothing of it needs keeping again.
  std::uint64_t bytes = 0;
  for (const auto& r : lost) {
    writeAll(st, r.data, r.offset, StableHow::kFileSync, false);
    bytes += r.data.size();
  }
  std::lock_guard lock(recoveryMu_);
  recovery_.rewrittenBytes += bytes;
}

}  // namespace nfsrdma
